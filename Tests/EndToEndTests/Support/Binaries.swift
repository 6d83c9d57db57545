import Foundation

/// Where the built `orchd` and `orchctl` are: beside the test bundle in SwiftPM's build
/// directory, or in `$ORCHD_BIN_DIR`.
enum Binaries {
    static let directory: String = {
        if let explicit = ProcessInfo.processInfo.environment["ORCHD_BIN_DIR"] { return explicit }
        var url = URL(fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0])
        url.deleteLastPathComponent()
        // Swift Testing may run from inside `orchdPackageTests.xctest`; executables sit beside it.
        while !FileManager.default.fileExists(atPath: url.appendingPathComponent("orchd").path), url.path != "/" {
            url.deleteLastPathComponent()
        }
        return url.path
    }()

    static var orchd: String { directory + "/orchd" }
    static var orchctl: String { directory + "/orchctl" }
}
