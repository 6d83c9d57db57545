import Foundation

/// A fresh directory for one test, removed when the value goes away.
final class TemporaryDirectory {
    let path: String

    init() throws {
        var template = Array((NSTemporaryDirectory() + "/orchd-store-test.XXXXXX").utf8CString)
        guard let created = mkdtemp(&template) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "mkdtemp failed: errno \(errno)"])
        }
        path = String(cString: created)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }

    /// `name` inside the directory.
    func file(_ name: String) -> String { path + "/" + name }
}
