/// Whether orchctl colours its tables: `--color auto|always|never`.
///
/// `auto` colours only a terminal, and never when `NO_COLOR` is set to anything but the
/// empty string (no-color.org) or `TERM` is `dumb`; `always` colours pipes too (for
/// `less -R`); `never` never.
enum ColorMode: String, Hashable, Sendable, CaseIterable {
    case auto, always, never

    /// The `--color` option's declaration text.
    static let optionHelp = "Colour states: auto (on a terminal, unless NO_COLOR is set), always or never."

    /// The words `--color` accepts.
    static var names: [String] { allCases.map(\.rawValue) }

    /// Whether to colour output.
    /// - Parameters:
    ///   - isTerminal: whether standard output is a terminal.
    ///   - environment: the process environment (`NO_COLOR`, `TERM`).
    func enabled(isTerminal: Bool, environment: [String: String]) -> Bool {
        switch self {
        case .always: return true
        case .never: return false
        case .auto:
            if let noColor = environment["NO_COLOR"], !noColor.isEmpty { return false }
            if environment["TERM"] == "dumb" { return false }
            return isTerminal
        }
    }

    /// `text` in the SGR colour of a job state or result (`running`, `failed(3)`, ...):
    /// running blue, succeeded green, waiting, retrying and cancelled yellow, other results
    /// red; queued plain.
    static func colored(state text: String) -> String {
        let code: String?
        switch text.prefix(while: { $0 != "(" }) {
        case "running": code = "34"
        case "succeeded": code = "32"
        case "waiting", "retrying", "cancelled": code = "33"
        case "queued": code = nil
        default: code = "31"
        }
        guard let code else { return text }
        return "\u{1B}[\(code)m" + text + "\u{1B}[0m"
    }
}
