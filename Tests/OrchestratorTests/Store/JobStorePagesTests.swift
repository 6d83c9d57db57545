import Foundation
import OrchestratorAPI
import Testing

@testable import Orchestrator

/// ``JobStore/listing(ids:queue:stateName:newest:)`` and ``JobStore/page(of:after:count:)``.
@Suite("JobStore pages")
struct JobStorePagesTests {
    let directory: TemporaryDirectory
    let store: JobStore

    init() throws {
        directory = try TemporaryDirectory()
        store = try JobStore(database: Database(path: directory.file("orchd.sqlite3")))
    }

    /// Reads a listing page by page, as a stream does.
    func all(_ listing: JobStore.JobListing, pageSize: Int) throws -> [JobID] {
        var ids: [JobID] = []
        while true {
            let page = try store.page(of: listing, after: ids.last, count: pageSize)
            ids += page.map(\.id)
            if page.count < pageSize { return ids }
        }
    }

    @Test("labels filter by every key and value given, as text, in pages and in one call; odd keys need no quoting")
    func labelFilter() throws {
        let labelSets: [[String: String]] = [
            ["kind": "nightly"], ["kind": "nightly", "team": "a"], ["kind": "adhoc"], [:], ["a\"b.c": "x y"], ["kind": ""],
        ]
        let specs = labelSets.map { JobSpec(command: .argv(["true"]), cwd: "/", environment: [:], labels: $0) }
        let ids = try store.insert(specs, submitterUid: 0, at: Date()).map(\.id)
        func listed(_ labels: [String: String]) throws -> [JobID] {
            let paged = try all(store.listing(ids: nil, queue: nil, stateName: nil, newest: nil, labels: labels), pageSize: 2)
            #expect(try store.jobs(labels: labels).map(\.id) == paged)
            return paged
        }
        #expect(try listed(["kind": "nightly"]) == [ids[0], ids[1]])
        #expect(try listed(["kind": "nightly", "team": "a"]) == [ids[1]])
        #expect(try listed(["a\"b.c": "x y"]) == [ids[4]])
        #expect(try listed(["kind": ""]) == [ids[5]])
        #expect(try listed(["kind": "none"]) == [])
        #expect(try listed([:]) == ids)
        #expect(try store.jobs(result: "failed").isEmpty, "none has finished")
        #expect(try all(store.listing(ids: nil, queue: nil, stateName: nil, newest: 2, labels: ["kind": "nightly"]), pageSize: 5) == [ids[0], ids[1]])
    }

    @Test("a filter of thousands of labels is one condition: it matches the job that has them all and no other")
    func manyLabelsFilter() throws {
        let many = Dictionary(uniqueKeysWithValues: (1...3000).map { ("k\($0)", "v\($0)") })
        var fewer = many
        fewer["k1500"] = nil
        var other = many
        other["k3000"] = "changed"
        let specs = [many, fewer, other].map { JobSpec(command: .argv(["true"]), cwd: "/", environment: [:], labels: $0) }
        let ids = try store.insert(specs, submitterUid: 0, at: Date()).map(\.id)
        #expect(try store.jobs(labels: many).map(\.id) == [ids[0]])
        #expect(try all(store.listing(ids: nil, queue: nil, stateName: nil, newest: nil, labels: many), pageSize: 2) == [ids[0]])
        #expect(try store.jobs(labels: fewer).map(\.id) == [ids[0], ids[1]])
        #expect(try store.jobs(labels: ["k3000": "v3000", "k1": "v1"]).map(\.id) == [ids[0], ids[1]])
    }

    @Test("pages cover the matching jobs once each, in ID order, newest N included, later jobs not")
    func pages() throws {
        let other = try #require(QueueName(rawValue: "other"))
        let specs = (0..<25).map { index in
            JobSpec(command: .argv(["true"]), cwd: "/", environment: [:], queue: index % 3 == 0 ? other : .default)
        }
        let jobs = try store.insert(specs, submitterUid: 0, at: Date())
        let everything = try store.listing(ids: nil, queue: nil, stateName: nil, newest: nil)
        let later = try store.insert(specs[0], submitterUid: 0, at: Date())
        #expect(try all(everything, pageSize: 4) == jobs.map(\.id), "a job submitted after the listing began is not in it")

        let inOther = (jobs + [later]).filter { $0.spec.queue == other }.map(\.id)
        #expect(try all(store.listing(ids: nil, queue: other, stateName: "queued", newest: nil), pageSize: 3) == inOther)
        #expect(try all(store.listing(ids: nil, queue: other, stateName: nil, newest: 4), pageSize: 3) == Array(inOther.suffix(4)))
        #expect(try all(store.listing(ids: nil, queue: other, stateName: nil, newest: 100), pageSize: 3) == inOther)
        #expect(try all(store.listing(ids: nil, queue: nil, stateName: nil, newest: 0), pageSize: 3) == [])
        #expect(try all(store.listing(ids: nil, queue: nil, stateName: "running", newest: nil), pageSize: 3) == [])
        let chosen = [jobs[20].id, jobs[2].id, JobID(rawValue: 999)]
        #expect(try all(store.listing(ids: chosen, queue: nil, stateName: nil, newest: nil), pageSize: 1) == [jobs[2].id, jobs[20].id])
    }

    @Test("an empty store lists nothing")
    func empty() throws {
        let listing = try store.listing(ids: nil, queue: nil, stateName: nil, newest: 5)
        #expect(listing.through == nil)
        #expect(try store.page(of: listing, after: nil, count: 10).isEmpty)
    }
}
