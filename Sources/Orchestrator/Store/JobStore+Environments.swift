import OrchestratorAPI

// MARK: - Environments, stored once

extension JobStore {
    /// The row of `environments` holding `environment`, added when no row holds it yet.
    ///
    /// Content-addressed: the JSON text (sorted keys, so equal environments give equal text)
    /// is looked up by its ``contentHash(_:)`` and compared in full, so a hash collision only
    /// costs a second row, never a wrong environment. A batch, or the submits of one shell,
    /// share one row instead of a copy of a few KiB in every job.
    /// - Returns: the row's ID, for `jobs.environment_id`.
    /// - Throws: ``DatabaseError``.
    func storeEnvironment(_ environment: [String: String], in db: Database) throws -> Int64 {
        let text = JobColumnJSON.encode(environment)
        let hash = Self.contentHash(text)
        let find = try db.cachedStatement("SELECT id FROM environments WHERE hash = ?1 AND json = ?2")
        defer { find.reset() }
        try find.bind([.integer(hash), .text(text)])
        if try find.step() { return find.int64(at: 0) }
        let add = try db.cachedStatement("INSERT INTO environments (hash, json) VALUES (?1, ?2)")
        defer { add.reset() }
        try add.bind([.integer(hash), .text(text)])
        try add.step()
        return db.lastInsertRowID
    }

    /// The environment stored in row `id` of `environments`, decoded once per row and
    /// daemon (see ``decodedEnvironments``).
    /// - Throws: what `bad` makes of the reason, when the row is missing or not a JSON object
    ///   of strings.
    func environment(_ id: Int64, _ bad: (String) -> JobStoreError) throws(JobStoreError) -> [String: String] {
        if database.rollbacks != decodedAtRollbacks {
            decodedEnvironments.removeAll(keepingCapacity: true)
            decodedAtRollbacks = database.rollbacks
        }
        if let known = decodedEnvironments[id] { return known }
        let text: String?
        do {
            text = try database.read { db in
                let statement = try db.cachedStatement("SELECT json FROM environments WHERE id = ?")
                defer { statement.reset() }
                try statement.bind([.integer(id)])
                return try statement.step() ? statement.string(at: 0) : nil
            }
        } catch {
            throw bad("cannot be read: \(error)")
        }
        guard let text else { throw bad("environment \(id) is not stored") }
        let environment = try decodeJSON([String: String].self, text, bad)
        // Bounded: the distinct environments of a long-lived daemon could grow without end.
        if decodedEnvironments.count >= 256 { decodedEnvironments.removeAll(keepingCapacity: true) }
        decodedEnvironments[id] = environment
        return environment
    }

    /// Deletes the environments of `ids` that no job refers to any more (after pruning).
    /// - Throws: ``DatabaseError``.
    func deleteUnreferencedEnvironments(_ ids: Set<Int64>, in db: Database) throws {
        if let last = lastStoredEnvironment, ids.contains(last.id) { lastStoredEnvironment = nil }
        let statement = try db.cachedStatement("""
            DELETE FROM environments WHERE id = ?1 AND NOT EXISTS (SELECT 1 FROM jobs WHERE environment_id = ?1)
            """)
        defer { statement.reset() }
        for id in ids.sorted() {
            statement.reset()
            try statement.bind([.integer(id)])
            try statement.step()
            decodedEnvironments[id] = nil
        }
    }

    /// A stable 64-bit hash of the environment's JSON text (FNV-1a,
    /// <http://www.isthe.com/chongo/tech/comp/fnv/>): the same on every run and machine,
    /// unlike Swift's `Hasher`, because it is stored.
    static func contentHash(_ text: String) -> Int64 {
        func fnv1a(_ bytes: some Sequence<UInt8>) -> Int64 {
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in bytes {
                hash ^= UInt64(byte)
                hash &*= 0x0000_0100_0000_01B3
            }
            return Int64(bitPattern: hash)
        }
        // Over the contiguous bytes: iterating `String.UTF8View` cost several times as much.
        return text.utf8.withContiguousStorageIfAvailable { fnv1a($0) } ?? fnv1a(text.utf8)
    }
}
