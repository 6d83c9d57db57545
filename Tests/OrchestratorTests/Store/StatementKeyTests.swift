import Foundation
import Testing

@testable import Orchestrator

/// The statement cache hashes a text's length and its first and last 48 bytes only:
/// texts alike there must still get statements of their own.
@Suite("Statement cache keys")
struct StatementKeyTests {
    @Test("two texts with the same length and the same 48 bytes at each end get different statements")
    func sameEndsDifferentMiddle() throws {
        let directory = try TemporaryDirectory()
        let db = try Database(path: directory.path + "/k.sqlite3")
        let head = "SELECT '" + String(repeating: "a", count: 60) + "' AS head, "
        let tail = " AS middle, '" + String(repeating: "z", count: 60) + "' AS tail"
        let one = head + "'ONE'" + tail
        let two = head + "'TWO'" + tail
        #expect(one.utf8.count == two.utf8.count && one != two)
        let first = try db.cachedStatement(one)
        #expect(try first.step())
        #expect(first.row.string("middle") == "ONE")
        first.reset()
        let second = try db.cachedStatement(two)
        #expect(second !== first)
        #expect(try second.step())
        #expect(second.row.string("middle") == "TWO")
        second.reset()
        #expect(try db.cachedStatement(one) === first)
        #expect(try db.cachedStatement(two) === second)
        // Many of them, all in one bucket: each still its own.
        var statements: [Statement] = []
        for index in 0..<50 {
            let sql = head + "'\(String(format: "%03d", index))'" + tail
            let statement = try db.cachedStatement(sql)
            #expect(!statements.contains { $0 === statement })
            #expect(try statement.step())
            #expect(statement.row.string("middle") == String(format: "%03d", index))
            statement.reset()
            statements.append(statement)
        }
    }

    @Test("a row read by name after a missing name, and by two statements in turn, reads the right columns")
    func lastColumnLookup() throws {
        let directory = try TemporaryDirectory()
        let db = try Database(path: directory.path + "/k.sqlite3")
        let a = try db.cachedStatement("SELECT 1 AS x, 2 AS y")
        let b = try db.cachedStatement("SELECT 3 AS y, 4 AS x")
        #expect(try a.step())
        #expect(try b.step())
        #expect(a.row.index("nope") == nil)
        #expect(a.row.int64("x") == 1)
        #expect(a.row.int64("x") == 1)
        #expect(b.row.int64("x") == 4)
        #expect(a.row.int64("y") == 2)
        #expect(b.row.int64("y") == 3)
        #expect(a.row.index("nope") == nil)
        #expect(a.row.index("y") == 1)
    }
}
