import OrchestratorAPI

// MARK: - Attempts running on Slurm

extension JobStore {
    /// Records that a running attempt is about to be submitted to Slurm (its Slurm job ID
    /// `''`), before `sbatch` runs: should orchd die before it records the ID, recovery knows
    /// to look for the job by name rather than submit it again.
    /// - Throws: ``JobStoreError`` when the job is not running, or ``DatabaseError``.
    public func recordSlurmSubmitting(_ id: JobID) throws {
        try setSlurmJobID(id, "")
    }

    /// Records the Slurm job ID a running attempt was submitted as (`sbatch --parsable`'s answer).
    /// The first ID recorded for the attempt also records its `started` event: Slurm has
    /// taken the job. An ID recorded again (orchd re-attached after a restart) records nothing more.
    /// - Parameters:
    ///   - id: the job; it must be running.
    ///   - slurmJobID: the Slurm job ID.
    /// - Throws: ``JobStoreError`` when the job is not running, or ``DatabaseError``.
    public func recordSlurmJob(_ id: JobID, slurmJobID: String) throws {
        try setSlurmJobID(id, slurmJobID, started: true)
    }

    private func setSlurmJobID(_ id: JobID, _ value: String, started: Bool = false) throws {
        try database.write { db in
            if started {
                let first = try db.cachedStatement(
                    "SELECT 1 FROM jobs WHERE id = ?1 AND state = 'running' AND coalesce(slurm_job_id, '') = ''")
                defer { first.reset() }
                try first.bind([.integer(id.rawValue)])
                if try first.step() { try recordStarted(id, in: db) }
            }
            let statement = try db.cachedStatement("UPDATE jobs SET slurm_job_id = ?2 WHERE id = ?1 AND state = 'running'")
            defer { statement.reset() }
            try statement.bind([.integer(id.rawValue), .text(value)])
            try statement.step()
            guard db.changes == 1 else {
                throw JobStoreError.invalidTransition(id, from: "not running", to: "submitted to Slurm")
            }
        }
    }
}
