import OrchestratorAPI

/// Why the job store refused a request or could not read a row; SQLite's own failures are
/// ``DatabaseError``s.
public enum JobStoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No job has this ID (never submitted, or pruned).
    case noSuchJob(JobID)
    /// The job is not in a state the transition starts from, e.g. starting a finished job.
    case invalidTransition(JobID, from: String, to: String)
    /// A stored row holds a value the model cannot represent (damaged or hand-edited data).
    /// - `column`: the offending column; `detail`: what is wrong with it.
    case invalidRow(id: Int64, column: String, detail: String)
    /// The database records migrations this program does not know: a newer orchd wrote it.
    case unknownMigrations([String])

    /// A sentence a user can act on.
    public var description: String {
        switch self {
        case .noSuchJob(let id):
            "no job \(id)"
        case .invalidTransition(let id, let from, let to):
            "job \(id) cannot go from \(from) to \(to)"
        case .invalidRow(let id, let column, let detail):
            "the stored job \(id) is damaged: column \(column): \(detail)"
        case .unknownMigrations(let names):
            "the database was written by a newer orchd (unknown migrations: \(names.joined(separator: ", ")))"
        }
    }
}
