import Foundation
import OrchestratorAPI

/// Decodes the parameters of `io.orchd.Jobs.Submit` and `io.orchd.Jobs.SubmitBatch` calls
/// with a small parser written for their shape, instead of `JSONDecoder` (most of a large
/// batch's cost, and a sixth of orchd's work for one submit, was the coder's generic
/// machinery, per field of every spec).
///
/// It accepts only input it reads exactly as the Codable decoder would: well-formed JSON,
/// integers without fraction or exponent that fit their field, no key given twice, valid
/// UTF-8, queue names and start times that their types accept. For anything else it gives
/// up, and ``batchParameters(of:)`` and ``submitParameters(of:)`` let the Codable decoder
/// decide; so bad input gets the same error, naming the same field, as before.
enum SubmitDecoder {
    /// A SubmitBatch call's parameters: from the parser when it accepts the message, else
    /// from ``VarlinkMethodCall/parameters(_:)`` (the Codable decoder, and its errors).
    /// - Throws: `org.varlink.service.InvalidParameter` naming the offending field.
    static func batchParameters(of call: VarlinkMethodCall) throws(VarlinkError) -> JobsInterface.SubmitBatchParameters {
        if let parameters = decodeBatch(call.message) { return parameters }
        return try call.parameters(JobsInterface.SubmitBatchParameters.self)
    }

    /// A Submit call's parameters, as ``batchParameters(of:)`` reads a batch's.
    /// - Throws: `org.varlink.service.InvalidParameter` naming the offending field.
    static func submitParameters(of call: VarlinkMethodCall) throws(VarlinkError) -> JobsInterface.SubmitParameters {
        if let parameters = decodeSubmit(call.message) { return parameters }
        return try call.parameters(JobsInterface.SubmitParameters.self)
    }

    /// The parameters of a whole SubmitBatch call message, or `nil` when the parser does not
    /// accept it.
    static func decodeBatch(_ message: Data) -> JobsInterface.SubmitBatchParameters? {
        decodeCall(message) { $0.batchParameters() }
    }

    /// The parameters of a whole Submit call message, or `nil` when the parser does not
    /// accept it.
    static func decodeSubmit(_ message: Data) -> JobsInterface.SubmitParameters? {
        decodeCall(message) { $0.submitParameters() }
    }

    private static func decodeCall<P>(_ message: Data, _ readParameters: (inout JSONByteReader) -> P?) -> P? {
        message.withUnsafeBytes { raw -> P? in
            var parser = JSONByteReader(bytes: raw.bindMemory(to: UInt8.self))
            guard let parameters = parser.call(readParameters), parser.atEnd() else { return nil }
            return parameters
        }
    }

    /// A call's header, as `VarlinkCallHeader` decodes it (`more` and `oneway` false when
    /// absent or null), or `nil` when the parser does not accept the message (then the Codable
    /// decoder judges it). Every call is read so before its method is known.
    static func header(of message: Data) -> (method: String, more: Bool, oneway: Bool)? {
        message.withUnsafeBytes { raw -> (method: String, more: Bool, oneway: Bool)? in
            var parser = JSONByteReader(bytes: raw.bindMemory(to: UInt8.self))
            var method: String?
            var more: Bool?, oneway: Bool?
            let ok = parser.object { key, parser in
                switch key {
                case "method": method = parser.string(); return method != nil
                case "more": return parser.null() || { more = parser.bool(); return more != nil }()
                case "oneway": return parser.null() || { oneway = parser.bool(); return oneway != nil }()
                default: return parser.skipValue()
                }
            }
            guard ok, parser.atEnd(), let method else { return nil }
            return (method, more ?? false, oneway ?? false)
        }
    }
}

/// The shapes of Submit's and SubmitBatch's parameters, read by ``JSONByteReader``.
extension JSONByteReader {

    /// `{"method": ..., "parameters": {...}, "more": ..., "oneway": ...}`, the parameters
    /// read by `readParameters`.
    mutating func call<P>(_ readParameters: (inout JSONByteReader) -> P?) -> P? {
        var parameters: P?
        var hasMethod = false
        let ok = object { key, parser in
            switch key {
            case "method":
                hasMethod = parser.string() != nil
                return hasMethod
            case "parameters":
                if parser.null() { return true }
                parameters = readParameters(&parser)
                return parameters != nil
            case "more", "oneway": return parser.null() || parser.bool() != nil
            default: return parser.skipValueCheckingNames()
            }
        }
        // Without a method the coder refuses the call.
        return ok && hasMethod ? parameters : nil
    }

    mutating func batchParameters() -> JobsInterface.SubmitBatchParameters? {
        var specs: [JobSpec]?
        var environment: [String: String]?
        var returnJobs: Bool?
        let ok = object { key, parser in
            switch key {
            case "specs":
                specs = parser.list { $0.spec() }
                return specs != nil
            case "environment":
                if parser.null() { return true }
                environment = parser.stringMap()
                return environment != nil
            case "returnJobs":
                if parser.null() { return true }
                returnJobs = parser.bool()
                return returnJobs != nil
            default: return parser.skipValueCheckingNames()
            }
        }
        guard ok, let specs else { return nil }
        return JobsInterface.SubmitBatchParameters(specs: specs, environment: environment, returnJobs: returnJobs)
    }

    /// `{"spec": {...}, "reuseExisting": ...}`.
    mutating func submitParameters() -> JobsInterface.SubmitParameters? {
        var spec: JobSpec?
        var reuseExisting: Bool?
        let ok = object { key, parser in
            switch key {
            case "spec":
                spec = parser.spec()
                return spec != nil
            case "reuseExisting":
                if parser.null() { return true }
                reuseExisting = parser.bool()
                return reuseExisting != nil
            default: return parser.skipValueCheckingNames()
            }
        }
        guard ok, let spec else { return nil }
        return JobsInterface.SubmitParameters(spec: spec, reuseExisting: reuseExisting)
    }

    /// One ``JobSpec``, as its `init(from:)` reads it (`null` is the same as absent for
    /// every optional field).
    mutating func spec() -> JobSpec? {
        var argv: [String]?, shell: String?, cwd: String?, environment: [String: String]?
        var queue: QueueName?, priority: Int?, name: String?, labels: [String: String]?
        var after: [JobID]?, notBefore: Date?, timeoutUSec: Int64?, maxAttempts: Int?, uniqueKey: String?
        let ok = object { key, parser in
            // Every known field may be null, meaning absent, except cwd.
            if key != "cwd" && parser.null() { return true }
            switch key {
            case "argv":
                argv = parser.list { $0.string() }
                return argv != nil
            case "shell": shell = parser.string(); return shell != nil
            case "cwd": cwd = parser.string(); return cwd != nil
            case "environment": environment = parser.stringMap(); return environment != nil
            case "queue":
                guard let text = parser.string(), let valid = QueueName(rawValue: text) else { return false }
                queue = valid
                return true
            case "priority":
                guard let value = parser.integer(), let narrow = Int(exactly: value) else { return false }
                priority = narrow
                return true
            case "name": name = parser.string(); return name != nil
            case "labels": labels = parser.stringMap(); return labels != nil
            case "after":
                after = parser.list { $0.integer().map(JobID.init(rawValue:)) }
                return after != nil
            case "notBefore":
                guard let text = parser.string(), let date = Timestamp.parse(text) else { return false }
                notBefore = date
                return true
            case "timeoutUSec": timeoutUSec = parser.integer(); return timeoutUSec != nil
            case "maxAttempts":
                guard let value = parser.integer(), let narrow = Int(exactly: value) else { return false }
                maxAttempts = narrow
                return true
            case "uniqueKey": uniqueKey = parser.string(); return uniqueKey != nil
            default: return parser.skipValueCheckingNames()
            }
        }
        guard ok, let cwd else { return nil }
        let command: JobCommand
        switch (argv, shell) {
        case (let argv?, nil): command = .argv(argv)
        case (nil, let shell?): command = .shell(shell)
        default: return nil
        }
        return JobSpec(
            command: command, cwd: cwd, environment: environment ?? [:], queue: queue ?? .default,
            priority: priority ?? 0, name: name, labels: labels ?? [:], after: after ?? [], notBefore: notBefore,
            timeoutUSec: timeoutUSec, maxAttempts: maxAttempts ?? 1, uniqueKey: uniqueKey)
    }
}
