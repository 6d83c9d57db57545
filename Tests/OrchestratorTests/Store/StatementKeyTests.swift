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

    @Test("columns read by name in the SELECT's order, out of it, twice, or under a shared name read the right values")
    func columnOrderGuess() throws {
        let directory = try TemporaryDirectory()
        let db = try Database(path: directory.path + "/k.sqlite3")
        let statement = try db.cachedStatement("SELECT 1 AS a, 2 AS b, 3 AS a, 4 AS c, 5 AS '' , 6 AS d")
        for _ in 0..<2 {
            #expect(try statement.step())
            let row = statement.row
            // In order, with the shared name reading its first column.
            #expect([row.int64("a"), row.int64("b"), row.int64("c"), row.int64("d")] == [1, 2, 4, 6])
            // Backwards, skipping, and again in order after a miss.
            #expect([row.int64("d"), row.int64("c"), row.int64("a"), row.int64("d"), row.int64("b")] == [6, 4, 1, 6, 2])
            #expect(row.index("missing") == nil)
            #expect(row.index("a") == 0)
            #expect(row.index("b") == 1)
            #expect(row.index("c") == 3)
            #expect(row.index("") == 4)
            #expect(row.index("d") == 5)
            statement.reset()
        }
    }
}
