#if canImport(Glibc)
import Glibc
#endif

// orchctl: the command-line client of orchd. Everything happens in `Orchctl.run`; only here
// does the exit status leave the process.
let status = Orchctl.runProcess()
exit(status.rawValue)
