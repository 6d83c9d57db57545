import OrchestratorAPI

// MARK: - Listing jobs in pages

extension Scheduler {
    /// Begins a listing of the jobs matching every filter given, to be read in pages with
    /// ``listPage(of:after:count:completion:)``: a listing of any length never sits in memory
    /// whole, and each page can wait until its reader is ready for it.
    /// - Parameters:
    ///   - limit: only the newest this many; `nil` for all.
    ///   - owner: only the jobs of this uid; `nil` for everyone's.
    /// - Returns: the listing (its ID range is fixed now).
    /// - Throws: a storage failure.
    public func beginListing(
        ids: [JobID]?, queue: QueueName?, stateName: String?, limit: Int?, owner: UInt32? = nil, result: String? = nil,
        labels: [String: String]? = nil
    ) throws(SchedulerError) -> JobStore.JobListing {
        do {
            return try store.listing(
                ids: ids, queue: queue, stateName: stateName, newest: limit, owner: owner, result: result, labels: labels)
        } catch {
            throw .storage(String(describing: error))
        }
    }

    /// The next page of a listing, in ID order; fewer than `count` jobs once it has no more.
    /// - Parameter after: the last ID of the previous page; `nil` for the first.
    public func listPage(of listing: JobStore.JobListing, after: JobID?, count: Int) throws(SchedulerError) -> [Job] {
        do {
            return try store.page(of: listing, after: after, count: count)
        } catch {
            throw .storage(String(describing: error))
        }
    }
}
