import FoundationEssentials
import OrchestratorAPI

/// Splits a batch into `SubmitBatch` calls that stay well under orchd's message cap (1 MiB;
/// larger calls are refused): at most ``maximumCount`` specs and about ``maximumBytes`` of JSON each.
///
/// Each chunk is one transaction on the daemon, so a batch that needs several is stored in
/// several.
enum BatchSplitter {
    /// The most specs in one call.
    static let maximumCount = 2_000
    /// The most estimated JSON bytes in one call; half the cap leaves room for the envelope
    /// and for the estimate's own slack.
    static let maximumBytes = 512 * 1024

    /// The most bytes one spec may encode to: orchd refuses a call over 1 MiB (and closes the
    /// connection), and a call holds the spec plus its envelope, kept under 4 KiB.
    static let maximumSpecBytes = (1 << 20) - 4096

    /// The size of `spec`'s JSON when it is too large to send in any call, else `nil`.
    /// Only a spec whose estimate passes the limit is encoded, so the common case costs nothing.
    static func oversizedBytes(_ spec: JobSpec) -> Int? {
        // Six bytes for each byte bounds every escape without reading one: nearly every spec
        // is decided there, where counting escapes read the whole environment.
        guard estimatedBytes(spec, stringBytes: longestString) > maximumSpecBytes,
              estimatedBytes(spec) > maximumSpecBytes else { return nil }
        let bytes = (try? JSONEncoder().encode(spec).count) ?? estimatedBytes(spec)
        return bytes > maximumSpecBytes ? bytes : nil
    }

    /// `the job spec is 2.0 MiB; the limit is 1 MiB`, or in bytes just under 1 MiB, where a
    /// tenth of a MiB would not show it is over (`1,046,000 bytes; the limit is 1,044,480`).
    static func oversizedMessage(_ bytes: Int) -> String {
        // Rounded up: an oversized spec never reads as within the limit.
        let mebibytes = (Double(bytes) / 104_857.6).rounded(.up) / 10
        guard mebibytes <= 1 else {
            return "the job spec is \(mebibytes) MiB; the limit is 1 MiB (orchd refuses larger calls)"
        }
        return "the job spec is \(JobTable.grouped(bytes)) bytes; the limit is \(JobTable.grouped(maximumSpecBytes)) (a call is at most 1 MiB: orchd refuses larger ones)"
    }

    /// Consecutive ranges of `specs`, in order, each within both limits (a single spec larger
    /// than `maximumBytes` gets a chunk of its own; the daemon then decides).
    /// - Parameter sharedEnvironment: the environment the call sends once for the specs with
    ///   an empty one (``SubmitCommand/sharingEnvironment(_:)``); a chunk with such a spec
    ///   counts it, as that chunk's call carries it (``usesShared(_:)``).
    static func chunks(
        _ specs: [JobSpec], sharedEnvironment: [String: String]? = nil, maximumCount: Int = maximumCount,
        maximumBytes: Int = maximumBytes
    ) -> [Range<Int>] {
        let sharedBytes = sharedEnvironment.map(environmentBytes) ?? 0
        var ranges: [Range<Int>] = []
        var start = 0
        var bytes = 0
        var sharing = false
        for (index, spec) in specs.enumerated() {
            let own = estimatedBytes(spec)
            let uses = sharedEnvironment != nil && spec.environment.isEmpty
            if index > start && (index - start >= maximumCount || bytes + own + (uses && !sharing ? sharedBytes : 0) > maximumBytes) {
                ranges.append(start..<index)
                start = index
                bytes = 0
                sharing = false
            }
            // The chunk's first spec that uses the shared environment pays for it.
            bytes += own + (uses && !sharing ? sharedBytes : 0)
            sharing = sharing || uses
        }
        if start < specs.count { ranges.append(start..<specs.count) }
        return ranges
    }

    /// Whether a call for `specs` must carry the shared environment: one of them has an empty
    /// environment, which orchd fills with it. A call without such a spec leaves it out, so a
    /// large spec of its own never travels beside a large shared environment it does not use.
    static func usesShared(_ specs: ArraySlice<JobSpec>) -> Bool {
        specs.contains { $0.environment.isEmpty }
    }

    /// An upper bound of the spec's size as JSONEncoder writes it (keys, punctuation, and
    /// strings with every escape counted), without encoding it.
    /// - Parameter stringBytes: a JSON string's length or a bound of it; by default the
    ///   length with every escape counted.
    static func estimatedBytes(_ spec: JobSpec, stringBytes string: (String) -> Int = string) -> Int {
        // Keys, quotes, braces, numbers and the time of every field (about 220 bytes at most),
        // and the comma between specs.
        var total = 240
        switch spec.command {
        case .argv(let argv): total += argv.reduce(0) { $0 + string($1) + 1 }
        case .shell(let shell): total += string(shell)
        }
        total += string(spec.cwd)
        total += environmentBytes(spec.environment, stringBytes: string)
        total += spec.labels.reduce(0) { $0 + string($1.key) + string($1.value) + 2 }
        total += spec.name.map(string) ?? 0
        total += spec.uniqueKey.map(string) ?? 0
        total += spec.queue.rawValue.utf8.count
        total += spec.after.count * 21
        return total
    }

    /// An upper bound of an environment's size as a JSON object.
    static func environmentBytes(_ environment: [String: String]) -> Int {
        environmentBytes(environment, stringBytes: string)
    }

    private static func environmentBytes(_ environment: [String: String], stringBytes string: (String) -> Int) -> Int {
        environment.reduce(0) { $0 + string($1.key) + string($1.value) + 2 }
    }

    /// The longest a JSON string of `text` can be: quotes and six bytes (`\u00XX`) a byte.
    /// Counting a native string's bytes reads none of them.
    private static func longestString(_ text: String) -> Int {
        2 + 6 * text.utf8.count
    }

    /// A JSON string's length: quotes plus each byte, escapes counted at their longest
    /// (`\u00XX` for control bytes, two bytes for `"`, `\` and `/`).
    private static func string(_ text: String) -> Int {
        var length = 2
        for byte in text.utf8 {
            switch byte {
            case 0..<0x20: length += 6
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): length += 2
            default: length += 1
            }
        }
        return length
    }
}
