import CPosix
import Foundation
import Glibc
import Testing

@testable import Orchestrator

@Suite("Process tree")
struct ProcessTreeTests {
    @Test("a process's children are read from every one of its threads' children files")
    func children() throws {
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        // Two children, then the shell becomes a third sleep; the test kills all three (not an
        // end of file: a pipe's write end can be inherited by processes other tests start).
        shell.arguments = ["-c", "sleep 60 & sleep 60 & echo ready; exec sleep 60"]
        let output = Pipe()
        shell.standardOutput = output
        try shell.run()
        // Both children exist once the shell has said so (within 600 s, or the test fails).
        var said = pollfd(fd: output.fileHandleForReading.fileDescriptor, events: Int16(POLLIN), revents: 0)
        let ready = poll(&said, 1, 600_000) == 1 ? output.fileHandleForReading.availableData : Data()
        let children = ProcessTree.children(of: String(shell.processIdentifier))
        for child in children + [shell.processIdentifier] { kill(child, SIGKILL) }
        shell.waitUntilExit()
        #expect(String(decoding: ready, as: UTF8.self) == "ready\n")
        #expect(children.count == 2, "\(children)")
        #expect(ProcessTree.children(of: "999999999").isEmpty, "a process that does not exist has none")
    }

    @Test("the descendants are looked at only in a child subreaper, which keeps every one of them")
    func descendantsOnlyForASubreaper() {
        if cposix_is_child_subreaper() == 1 {
            #expect(ProcessTree.daemonDescendants() != nil)
        } else {
            #expect(ProcessTree.daemonDescendants() == nil, "not a subreaper: escaped processes go elsewhere, so every process is scanned")
        }
    }

    @Test("without readable children files (no CONFIG_PROC_CHILDREN) the tree is unknown, not empty")
    func descendantsUnknownWithoutChildrenFiles() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("proctree-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        // A process with one thread and no children file, as such a kernel shows it.
        try FileManager.default.createDirectory(at: root.appendingPathComponent("self/task/42"), withIntermediateDirectories: true)
        #expect(ProcessTree.descendants(of: "self", procRoot: root.path) == nil, "an empty list would hide every escaped process")
        // With the file, its children are read (here: none).
        try Data().write(to: root.appendingPathComponent("self/task/42/children"))
        #expect(ProcessTree.descendants(of: "self", procRoot: root.path) == [])
        // The real tree of this process is readable on this kernel.
        #expect(ProcessTree.descendants(of: "self") != nil)
    }
}
