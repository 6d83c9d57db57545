import Foundation
import Glibc
import Testing

/// Queues are declared: `queue add`, `queue remove`, the configuration file, and `default`
/// always exists; submitting to another queue is an error naming the known ones.
@Suite("Declared queues end to end")
struct QueueDeclarationTests {
    @Test("a fresh daemon has the queue default: pause without a name pauses it")
    func defaultExists() throws {
        let daemon = try TestDaemon()
        let paused = try daemon.orchctl(["pause"])
        #expect(paused.status == 0 && paused.standardOutput.contains("default"), "\(paused)")
        #expect(try daemon.orchctl(["queues"]).standardOutput.contains("default"))
    }

    @Test("submit to a queue that was never added is refused naming the known queues; nothing is stored, batch too")
    func unknownQueue() throws {
        let daemon = try TestDaemon()
        #expect(try daemon.orchctl(["queue", "add", "work", "--concurrency", "2"]).status == 0)
        let typo = try daemon.orchctl(["submit", "--queue", "wrok", "--", "true"])
        #expect(typo.status == 1, "\(typo)")
        #expect(typo.standardError.contains("no queue named 'wrok'; the queues are default, work (add one with 'orchctl queue add wrok')"), "\(typo)")
        let batch = try daemon.orchctl(["submit", "--queue", "wrok", "--batch", "-"], input: "true\ntrue\n")
        #expect(batch.status == 1 && batch.standardError.contains("no queue named 'wrok'"), "\(batch)")
        let json = try daemon.orchctl(["submit", "--batch", "-"], input: "true\n{\"argv\": [\"true\"], \"queue\": \"nope\"}\n")
        #expect(json.status == 1 && json.standardError.contains("no queue named 'nope'"), "\(json)")
        #expect(try daemon.orchctl(["status", "--json"]).standardOutput.filter { !$0.isWhitespace } == "[]", "nothing was submitted")
        let listed = try daemon.orchctl(["status", "--queue", "wrok"])
        #expect(listed.status == 1 && listed.standardError.contains("no queue named 'wrok'; the queues are default, work"), "\(listed)")
        #expect(try daemon.orchctl(["status", "--queue", "work"]).status == 0, "a known queue with no jobs lists nothing")
        #expect(try daemon.orchctl(["submit", "--queue", "work", "--wait", "--", "true"]).status == 0)
        // queue set no longer makes queues.
        let set = try daemon.orchctl(["queue", "set", "wrok", "--concurrency", "1"])
        #expect(set.status == 1 && set.standardError.contains("no queue named 'wrok'"), "\(set)")
        let again = try daemon.orchctl(["queue", "add", "work"])
        #expect(again.status == 1 && again.standardError.contains("a queue named 'work' exists already"), "\(again)")
    }

    @Test("queue remove is refused while the queue has unfinished jobs, and for default; afterwards submits are refused")
    func remove() throws {
        let daemon = try TestDaemon()
        #expect(try daemon.orchctl(["queue", "add", "work"]).status == 0)
        #expect(try daemon.orchctl(["pause", "work"]).status == 0)
        let queued = try daemon.orchctl(["submit", "--queue", "work", "--", "true"]).line
        let busy = try daemon.orchctl(["queue", "remove", "work"])
        #expect(busy.status == 1, "\(busy)")
        #expect(busy.standardError.contains("queue 'work' cannot be removed: it has 1 unfinished job (1 queued)"), "\(busy)")
        #expect(try daemon.orchctl(["cancel", queued]).status == 0)
        let removed = try daemon.orchctl(["queue", "remove", "work"])
        #expect(removed.status == 0 && removed.standardOutput == "removed queue work\n", "\(removed)")
        #expect(!(try daemon.orchctl(["queues"]).standardOutput.contains("work")))
        #expect(try daemon.orchctl(["queue", "add", "spare"]).status == 0)
        let json = try daemon.orchctl(["--json", "queue", "remove", "spare"])
        #expect(json.status == 0 && json.standardOutput == "{\n  \"removed\" : \"spare\"\n}\n", "\(json)")
        #expect(try daemon.orchctl(["submit", "--queue", "work", "--", "true"]).status == 1)
        // Its finished job stays; retrying it needs the queue back.
        #expect(try daemon.orchctl(["show", queued]).status == 0)
        let retry = try daemon.orchctl(["retry", queued])
        #expect(retry.status == 1 && retry.standardError.contains("no queue named 'work'"), "\(retry)")
        let defaultQueue = try daemon.orchctl(["queue", "remove", "default"])
        #expect(defaultQueue.status == 1 && defaultQueue.standardError.contains("the default queue always exists"), "\(defaultQueue)")
        #expect(try daemon.orchctl(["queue", "remove", "nope"]).status == 1)
        #expect(try daemon.orchctl(["queue", "remove"]).status == 64)
    }

    @Test("the configuration file declares queues with their settings; they survive a restart, as added ones do")
    func configured() throws {
        let daemon = try TestDaemon(configuration: "queue.batch = concurrency=3, retry-base=2s\nqueue.plain =\n")
        let queues = try daemon.orchctl(["queues", "--json"])
        let list = try #require(try JSONSerialization.jsonObject(with: Data(queues.standardOutput.utf8)) as? [[String: Any]], "\(queues)")
        let batch = try #require(list.first { $0["name"] as? String == "batch" })
        #expect(batch["concurrency"] as? Int == 3 && batch["retryBaseUSec"] as? Int == 2_000_000, "\(batch)")
        #expect(list.map { $0["name"] as? String } == ["batch", "default", "plain"])
        #expect(try daemon.orchctl(["queue", "add", "added"]).status == 0)
        #expect(daemon.stop() == 0)
        try daemon.start()
        for queue in ["batch", "plain", "added"] {
            #expect(try daemon.orchctl(["submit", "--queue", queue, "--wait", "--", "true"]).status == 0, "\(queue)")
        }
    }
}
