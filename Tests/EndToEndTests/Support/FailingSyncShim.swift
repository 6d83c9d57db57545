import Foundation
import Glibc

/// A shared library that, preloaded into orchd (`LD_PRELOAD`), makes `fdatasync(2)` and
/// `fsync(2)` fail with `EIO` while a flag file exists, as a disk's write error would;
/// otherwise it calls the C library's. Compiled for each test with the toolchain's `clang`
/// (or `cc`).
final class FailingSyncShim {
    /// The library to preload.
    let library: String
    /// While this file exists, every sync fails.
    let flag: String
    /// While this file exists, syncs of files open for writing fail: SQLite's own (its
    /// checkpoints), not orchd's barrier, which opens the WAL read-only.
    let writersFlag: String
    private let directory: String

    /// The environment that preloads it into a daemon.
    var environment: [String: String] {
        ["LD_PRELOAD": library, "ORCHD_TEST_FAIL_SYNC_WHILE": flag, "ORCHD_TEST_FAIL_WRITERS_SYNC_WHILE": writersFlag]
    }

    private static let source = """
        #define _GNU_SOURCE
        #include <dlfcn.h>
        #include <errno.h>
        #include <fcntl.h>
        #include <stdlib.h>
        #include <unistd.h>

        static int fails(int fd) {
            const char *all = getenv("ORCHD_TEST_FAIL_SYNC_WHILE");
            if (all != NULL && access(all, F_OK) == 0) return 1;
            const char *writers = getenv("ORCHD_TEST_FAIL_WRITERS_SYNC_WHILE");
            return writers != NULL && access(writers, F_OK) == 0 && (fcntl(fd, F_GETFL) & O_ACCMODE) != O_RDONLY;
        }

        int fdatasync(int fd) {
            if (fails(fd)) { errno = EIO; return -1; }
            int (*real)(int) = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
            return real(fd);
        }

        int fsync(int fd) {
            if (fails(fd)) { errno = EIO; return -1; }
            int (*real)(int) = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
            return real(fd);
        }
        """

    init() throws {
        var template = Array("/tmp/orchd-shim-XXXXXX".utf8CString)
        guard let created = mkdtemp(&template) else { throw TestFailure("mkdtemp: errno \(errno)") }
        directory = String(cString: created)
        library = directory + "/failing-sync.so"
        flag = directory + "/fail"
        writersFlag = directory + "/fail-writers"
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

    /// From now on, every sync fails.
    func failFromNow() throws {
        guard FileManager.default.createFile(atPath: flag, contents: nil) else { throw TestFailure("cannot create \(flag)") }
    }

    /// From now on, syncs of files open for writing fail (SQLite's checkpoints).
    func failWritersFromNow() throws {
        guard FileManager.default.createFile(atPath: writersFlag, contents: nil) else { throw TestFailure("cannot create \(writersFlag)") }
    }

    /// From now on, every sync works again.
    func stopFailing() throws {
        for file in [flag, writersFlag] where FileManager.default.fileExists(atPath: file) {
            try FileManager.default.removeItem(atPath: file)
        }
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
