import Foundation
import Glibc
import Testing

@testable import Orchestrator

@Suite("A state directory named in a process's environment")
struct DirectoryIdentityTests {
    /// A temporary directory with a `state` directory, a symbolic link to it and a sibling.
    private func makeDirectories() throws -> String {
        var template = Array("/tmp/orchd-identity-XXXXXX".utf8CString)
        let root = try #require(mkdtemp(&template).map { String(cString: $0) })
        #expect(mkdir(root + "/state", 0o700) == 0)
        #expect(mkdir(root + "/other", 0o700) == 0)
        #expect(symlink(root + "/state", root + "/link") == 0)
        return root
    }

    @Test("the daemon's own name, and any other name of the same directory, name it; another directory or a relative name does not")
    func namesTheSameDirectory() throws {
        let root = try makeDirectories()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let identity = ProcessIdentity.DirectoryIdentity(path: root + "/state")
        func named(_ name: String) -> Bool { identity.isNamed(by: Array(name.utf8)[...]) }
        #expect(named(root + "/state"))
        #expect(named(root + "/state/"))
        #expect(named(root + "/link"))
        #expect(named(root + "/other/../state"))
        #expect(!named(root + "/other"))
        #expect(!named(root + "/missing"))
        #expect(!named(String(root.dropFirst()) + "/state"), "a relative name depends on orchd's working directory")
        #expect(!named(""))
    }

    @Test("a state directory that is gone is named by its own name only")
    func goneDirectory() throws {
        let root = try makeDirectories()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let identity = ProcessIdentity.DirectoryIdentity(path: root + "/missing")
        #expect(identity.isNamed(by: Array((root + "/missing").utf8)[...]))
        #expect(!identity.isNamed(by: Array((root + "/state").utf8)[...]))
    }
}
