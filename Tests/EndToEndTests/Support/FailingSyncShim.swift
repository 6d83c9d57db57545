import Foundation
import Glibc

/// A shared library that, preloaded into orchd (`LD_PRELOAD`), makes `fdatasync(2)` fail
/// with `EIO` while a flag file exists, as a disk's write error would; otherwise it calls
/// the C library's. Compiled for each test with the toolchain's `clang` (or `cc`).
final class FailingSyncShim {
    /// The library to preload.
    let library: String
    /// While this file exists, `fdatasync` fails.
    let flag: String
    private let directory: String

    /// The environment that preloads it into a daemon.
    var environment: [String: String] { ["LD_PRELOAD": library, "ORCHD_TEST_FAIL_FDATASYNC_WHILE": flag] }

    private static let source = """
        #define _GNU_SOURCE
        #include <dlfcn.h>
        #include <errno.h>
        #include <stdlib.h>
        #include <unistd.h>

        int fdatasync(int fd) {
            const char *flag = getenv("ORCHD_TEST_FAIL_FDATASYNC_WHILE");
            if (flag != NULL && access(flag, F_OK) == 0) {
                errno = EIO;
                return -1;
            }
            int (*real)(int) = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
            return real(fd);
        }
        """

    init() throws {
        var template = Array("/tmp/orchd-shim-XXXXXX".utf8CString)
        guard let created = mkdtemp(&template) else { throw TestFailure("mkdtemp: errno \(errno)") }
        directory = String(cString: created)
        library = directory + "/failing-sync.so"
        flag = directory + "/fail"
        let sourceFile = directory + "/failing-sync.c"
        try Self.source.write(toFile: sourceFile, atomically: true, encoding: .utf8)
        guard let compiler = Self.findCompiler() else {
            throw TestFailure("this test compiles a preloaded fdatasync(2) and needs a C compiler: neither clang (it comes with the Swift toolchain) nor cc is on PATH")
        }
        let compiled = try TestDaemon.run(compiler, ["-shared", "-fPIC", "-o", library, sourceFile, "-ldl"])
        guard compiled.status == 0 else { throw TestFailure("\(compiler) could not build the shim: \(compiled.standardError)") }
    }

    deinit {
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// From now on, every `fdatasync` fails.
    func failFromNow() throws {
        guard FileManager.default.createFile(atPath: flag, contents: nil) else { throw TestFailure("cannot create \(flag)") }
    }

    /// From now on, `fdatasync` works again.
    func stopFailing() throws {
        try FileManager.default.removeItem(atPath: flag)
    }

    private static func findCompiler() -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for name in ["clang", "cc"] {
            for directory in path.split(separator: ":") where access("\(directory)/\(name)", X_OK) == 0 {
                return "\(directory)/\(name)"
            }
        }
        return nil
    }
}
