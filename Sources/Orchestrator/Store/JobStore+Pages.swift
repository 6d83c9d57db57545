import OrchestratorAPI

// MARK: - Listing in pages

extension JobStore {
    /// Which jobs a paged listing covers: the filters, and the ID range fixed when it began.
    public struct JobListing: Sendable, Equatable {
        /// Only these jobs; `nil` for any.
        public var ids: [JobID]?
        /// Only jobs of this queue; `nil` for any.
        public var queue: QueueName?
        /// Only jobs in this state (one of ``JobState/names``); `nil` for any.
        public var stateName: String?
        /// Only jobs of this owner (submitter uid); `nil` for any.
        public var owner: UInt32? = nil
        /// Only finished jobs with this result (one of ``JobResult/names``); `nil` for any.
        public var result: String?
        /// Only jobs carrying every one of these labels with these values; `nil` for any.
        public var labels: [String: String]?
        /// The lowest ID listed; `nil` from the first job.
        public var from: JobID?
        /// The highest ID listed (jobs submitted after the listing began are not in it);
        /// `nil` when there was no job at all.
        public var through: JobID?
    }

    /// Fixes the ID range of a listing now: every matching job, or with `newest`, only the
    /// newest this many of them.
    /// - Parameters:
    ///   - ids, queue, stateName: the filters, as in ``jobs(ids:queue:stateName:limit:)``.
    ///   - newest: only the newest (highest IDs) this many; `nil` for no limit.
    ///   - owner: only jobs this uid submitted; `nil` for everyone's.
    /// - Throws: ``DatabaseError``.
    ///   - result, labels: as in ``jobs(ids:queue:stateName:limit:owner:result:labels:)``.
    public func listing(
        ids: [JobID]?, queue: QueueName?, stateName: String?, newest: Int?, owner: UInt32? = nil, result: String? = nil,
        labels: [String: String]? = nil
    ) throws -> JobListing {
        var listing = JobListing(ids: ids, queue: queue, stateName: stateName, owner: owner, result: result, labels: labels)
        listing.through = try database.read { db in
            let statement = try db.cachedStatement("SELECT max(id) FROM jobs")
            defer { statement.reset() }
            guard try statement.step(), !statement.isNull(at: 0) else { return nil as JobID? }
            return JobID(rawValue: statement.int64(at: 0))
        }
        guard let newest, let through = listing.through else { return listing }
        if newest <= 0 {
            listing.from = JobID(rawValue: through.rawValue + 1)
            return listing
        }
        // Where the newest `newest` begin: the newest-th matching ID counting down.
        var (conditions, values) = Self.conditions(of: listing)
        conditions.append("id <= ?")
        values.append(.integer(through.rawValue))
        values.append(.integer(Int64(newest - 1)))
        listing.from = try database.read { db in
            let statement = try db.cachedStatement(
                "SELECT id FROM jobs WHERE " + conditions.joined(separator: " AND ") + " ORDER BY id DESC LIMIT 1 OFFSET ?")
            defer { statement.reset() }
            try statement.bind(values)
            // Fewer match than asked for: all of them, from the first.
            guard try statement.step() else { return nil as JobID? }
            return JobID(rawValue: statement.int64(at: 0))
        }
        return listing
    }

    /// The next page of a listing, in ID order.
    /// - Parameters:
    ///   - listing: from ``listing(ids:queue:stateName:newest:)``.
    ///   - after: the last ID of the previous page; `nil` for the first page.
    ///   - count: at most this many jobs.
    /// - Returns: the jobs; fewer than `count` only when the listing has no more.
    /// - Throws: ``DatabaseError``, or ``JobStoreError/invalidRow(id:column:detail:)``.
    public func page(of listing: JobListing, after: JobID?, count: Int) throws -> [Job] {
        guard let through = listing.through else { return [] }
        var (conditions, values) = Self.conditions(of: listing)
        conditions.append("id > ?")
        values.append(.integer(max(after?.rawValue ?? 0, (listing.from?.rawValue ?? 0) - 1)))
        conditions.append("id <= ?")
        values.append(.integer(through.rawValue))
        values.append(.integer(Int64(max(count, 0))))
        return try select(
            "SELECT \(Self.columns) FROM jobs WHERE " + conditions.joined(separator: " AND ") + " ORDER BY id LIMIT ?",
            values
        ).map(\.job)
    }

    /// The SQL conditions and their values for a listing's filters.
    private static func conditions(of listing: JobListing) -> (conditions: [String], values: [DatabaseValue]) {
        var conditions: [String] = []
        var values: [DatabaseValue] = []
        if let ids = listing.ids {
            conditions.append("id IN (SELECT value FROM json_each(?))")
            values.append(.text(jsonArray(ids)))
        }
        if let queue = listing.queue {
            conditions.append("queue = ?")
            values.append(.text(queue.rawValue))
        }
        if let stateName = listing.stateName {
            conditions.append("state = ?")
            values.append(.text(stateName))
        }
        if let owner = listing.owner {
            conditions.append("submitter_uid = ?")
            values.append(.integer(Int64(owner)))
        }
        appendConditions(result: listing.result, labels: listing.labels, to: &conditions, values: &values)
        return (conditions, values)
    }

    /// Adds the conditions of the result and label filters: `result = ?`, and that every
    /// label asked for is among the job's labels (a JSON object): one condition whatever their
    /// number, the filter passed as one JSON object and compared key and value as text, so no
    /// key needs quoting. (A condition per label nested the statement's expression tree a
    /// level per label, and SQLite refuses one deeper than 1,000.)
    static func appendConditions(
        result: String?, labels: [String: String]?, to conditions: inout [String], values: inout [DatabaseValue]
    ) {
        if let result {
            conditions.append("result = ?")
            values.append(.text(result))
        }
        if let labels, !labels.isEmpty {
            conditions.append(
                "(SELECT count(*) FROM json_each(jobs.labels) AS l JOIN json_each(?) AS f ON l.key = f.key AND l.value = f.value) = ?")
            values.append(.text(JobColumnJSON.encode(labels)))
            values.append(.integer(Int64(labels.count)))
        }
    }
}
