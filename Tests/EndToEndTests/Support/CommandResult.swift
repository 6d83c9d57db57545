/// What a finished command printed and how it exited.
struct CommandResult: CustomStringConvertible {
    var status: Int32
    var standardOutput: String
    var standardError: String
    var outputBytes: [UInt8]

    var description: String {
        "exit \(status)\nstdout: \(standardOutput)\nstderr: \(standardError)"
    }

    /// Standard output without the final newline.
    var line: String {
        standardOutput.hasSuffix("\n") ? String(standardOutput.dropLast()) : standardOutput
    }
}
