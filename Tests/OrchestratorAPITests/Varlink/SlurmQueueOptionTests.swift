import Testing
@testable import OrchestratorAPI

@Suite("A Slurm queue's sbatch options")
struct SlurmQueueOptionTests {
    @Test("a reserved option is refused in every spelling sbatch's getopt_long accepts", arguments: [
        // Unambiguous prefixes of reserved long options.
        "--outp=/etc/cron.d/x", "--err=/tmp/x", "--wra=id", "--arr=1-100", "--wai", "--ui=0", "--gi=0",
        "--export-f=/tmp/env", "--exp=ALL", "--chd=/", "--job-n=x", "--comm=x", "--inp=/etc/shadow", "--pars",
        // Short options with their value attached, or after flags that take none.
        "-o/tmp/x", "-e/tmp/x", "-Jname", "-D/", "-a1-100", "-i/etc/shadow", "-vW", "-QW", "-vo/tmp/x",
        // The end of the options: orchd's own would become the script and its arguments.
        "--", "--=x",
        // The exact names, as before.
        "--output=/tmp/x", "--uid=0", "-W", "--requeue", "--no-req",
    ])
    func reservedSpellings(option: String) {
        let problem = QueuesInterface.slurmProblem(partition: nil, options: [option])
        #expect(problem?.contains("set by orchd for every job") == true, "\(option): \(problem ?? "accepted")")
    }

    @Test("options orchd does not set are accepted, even when they begin like one it does", arguments: [
        "--mem=2G", "--time-min=5", "--wait-all-nodes=1", "--exclusive", "--gres=gpu:1", "--account=lab",
        "--constraint=avx", "-t10", "-n4", "-N1", "-pdebug", "-c4",
        "-Cavx", "-v", "-Q",
    ])
    func ordinaryOptions(option: String) {
        #expect(QueuesInterface.slurmProblem(partition: nil, options: [option]) == nil, "\(option)")
    }
}
