import Foundation
import Glibc
import OrchestratorAPI
import Testing

@testable import Orchestrator

@Suite("Held end journal")
struct HeldEndJournalTests {
    private func entry(_ id: Int64, _ result: JobResult, attempt: Int = 1, final: Bool = false) -> HeldEndJournal.Entry {
        HeldEndJournal.Entry(
            id: JobID(rawValue: id), attempt: attempt, ending: JobStore.Ending(result: result, isFinal: final),
            endedAt: Timestamp.date(microseconds: 1_800_000_000_123_456))
    }

    @Test("an end held is read back by a new opening of the file, as a restart reads it, until it is released")
    func holdReadRelease() throws {
        let directory = try TemporaryDirectory()
        let journal = try HeldEndJournal(stateDirectory: directory.path)
        let ends = [entry(7, .succeeded), entry(8, .failed(exitCode: 3), attempt: 2), entry(9, .cancelled, final: true),
                    entry(10, .signaled(signal: 9))]
        for end in ends { #expect(journal.hold(end)) }
        var info = stat()
        #expect(stat(journal.path, &info) == 0 && Int(info.st_size) == HeldEndJournal.slotCount * HeldEndJournal.slotBytes,
                "allocated in full at opening")

        let reopened = try HeldEndJournal(stateDirectory: directory.path)
        #expect(reopened.entries() == Dictionary(uniqueKeysWithValues: ends.map { ($0.id, $0) }))
        reopened.release(JobID(rawValue: 8))
        #expect(Set(try HeldEndJournal(stateDirectory: directory.path).entries().keys) == Set([7, 9, 10].map(JobID.init(rawValue:))))
        reopened.releaseAll()
        #expect(try HeldEndJournal(stateDirectory: directory.path).entries().isEmpty)
    }

    @Test("a result recovery has no words for is not held: the job is then recovered as interrupted, as before")
    func resultsWithoutEnding() throws {
        let directory = try TemporaryDirectory()
        let journal = try HeldEndJournal(stateDirectory: directory.path)
        #expect(!journal.hold(entry(1, .interrupted)))
        #expect(!journal.hold(entry(2, .spawnFailed(reason: "no such file"))))
        #expect(journal.entries().isEmpty)
    }

    @Test("a slot cut short or changed fails its checksum and is ignored; the others are read")
    func tornSlot() throws {
        let directory = try TemporaryDirectory()
        let journal = try HeldEndJournal(stateDirectory: directory.path)
        #expect(journal.hold(entry(1, .succeeded)))
        #expect(journal.hold(entry(2, .succeeded)))
        // The second slot's line with one digit changed, as a torn write could leave it.
        let fd = open(journal.path, O_RDWR)
        defer { close(fd) }
        var byte: UInt8 = UInt8(ascii: "3")
        #expect(pwrite(fd, &byte, 1, off_t(HeldEndJournal.slotBytes + 3)) == 1)
        #expect(Array(try HeldEndJournal(stateDirectory: directory.path).entries().keys) == [JobID(rawValue: 1)])
        #expect(HeldEndJournal.parse("v1 1 1 5 succeeded") == nil, "no checksum")
        #expect(HeldEndJournal.parse("") == nil)
    }
}
