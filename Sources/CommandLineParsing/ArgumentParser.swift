import OrchestratorAPI

/// Parses a command line against a table of ``CommandSpec``s (orchctl), or against one
/// command that has no command word (orchd).
///
/// Rules: global options (orchctl's `--socket` and `--json`; `-h/--help` and `--version`
/// everywhere) go before or after the command word; `--opt value` and `--opt=value` are the
/// same; `--` ends options, and what follows is kept verbatim (the job's argv for
/// `submit`); `help COMMAND` is
/// `COMMAND --help`; a command option with a one-letter alias takes it after the command
/// word (`logs -f`). Every mistake is a ``CommandLineError``.
public struct ArgumentParser: Sendable {
    /// The commands, in the order help lists them; built only once a command word needs
    /// them, so `--version` and `--help` do not pay for declaring every command's options.
    private let commandTable: @Sendable () -> [CommandSpec]
    /// Finds one top-level command by its word without building the table (nil: not known).
    private let commandNamed: @Sendable (String) -> CommandSpec?
    /// The command of a program without command words: every word is its option or argument.
    private let impliedCommand: CommandSpec?
    /// Options accepted with every command, before or after its word (``GlobalOptions``).
    private let globalSpecs: [OptionSpec]

    /// Creates a parser over `commands`, evaluated at most once per parse and only when needed.
    /// - Parameters:
    ///   - commands: every top-level command, for help and for a word `commandNamed` does
    ///     not know.
    ///   - commandNamed: the top-level command with this word, built alone; by default
    ///     looked up in `commands`.
    public init(
        commands: @escaping @autoclosure @Sendable () -> [CommandSpec],
        commandNamed: (@Sendable (String) -> CommandSpec?)? = nil
    ) {
        commandTable = commands
        self.commandNamed = commandNamed ?? { word in commands().first { $0.name == word } }
        impliedCommand = nil
        globalSpecs = GlobalOptions.specs
    }

    /// Creates a parser for a program that is one command, without a command word (`orchd
    /// --state-dir DIR`): its options and arguments, `-h/--help` and `--version`, no global
    /// options. ``parse(_:)`` returns `.help(command)` for `--help`.
    public init(command: CommandSpec) {
        commandTable = { [] }
        commandNamed = { _ in nil }
        impliedCommand = command
        globalSpecs = []
    }

    /// Checks one value against `kind` and converts it, as for an option: for text that
    /// declares options elsewhere (orchd's configuration file), so that it is checked
    /// exactly as on the command line.
    /// - Parameters:
    ///   - value: the text.
    ///   - kind: what it must look like.
    ///   - what: how the message names its source (`'concurrency'` gives "invalid value for
    ///     'concurrency': …").
    ///   - placeholder: the value's name in help, for messages about its form.
    /// - Returns: the converted value.
    /// - Throws: ``CommandLineError`` (`invalidValue`) saying what is wrong with it.
    public static func value(_ value: String, as kind: ValueKind, what: String, placeholder: String) throws(CommandLineError) -> ParsedValue {
        try parse(value, as: kind, what: what, placeholder: placeholder, command: nil)
    }

    /// `word` as a POSIX shell reads it back: as it is when it has nothing the shell would
    /// read otherwise, else in single quotes (a quote inside as `'\''`).
    public static func shellQuoted(_ word: String) -> String {
        let plain = !word.isEmpty && word.unicodeScalars.allSatisfy { scalar in
            scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || "-_./=:,+@%".unicodeScalars.contains(scalar)
        }
        return plain ? word : "'" + word.split(separator: "'", omittingEmptySubsequences: false).joined(separator: #"'\''"#) + "'"
    }

    /// Parses `arguments` (without the program name).
    /// - Throws: ``CommandLineError`` describing the first problem found.
    public func parse(_ arguments: [String]) throws(CommandLineError) -> ParseOutcome {
        var table: [CommandSpec]?
        func commands() -> [CommandSpec] {
            if let table { return table }
            let built = commandTable()
            table = built
            return built
        }
        var global = GlobalOptions()
        var command: CommandSpec? = impliedCommand
        var invocation: Invocation? = impliedCommand.map { Invocation(command: $0, global: global) }
        var wantsHelp = false
        var wantsVersion = false
        var index = 0
        // The option whose value was the word before, given as a word of its own: a word that
        // cannot come after it may be the rest of an unquoted value (`--delay 10 mins`).
        var valueBefore: (option: OptionSpec, value: String)?

        while index < arguments.count {
            let word = arguments[index]
            index += 1
            let previousValue = valueBefore
            valueBefore = nil

            if word == "--" {
                guard var current = invocation, let spec = command else {
                    throw CommandLineError(.missingCommand, "expected a command before '--'")
                }
                let rest = Array(arguments[index...])
                if spec.takesTrailingArguments {
                    current.trailing = rest
                } else {
                    current.arguments += rest
                }
                invocation = current
                break
            }

            if word.hasPrefix("-") && word != "-" && !Self.isNegativeNumber(word) {
                // Split `--name=value`; a single dash is only the short `-h`.
                let name: String
                var attached: String?
                if word.hasPrefix("--") {
                    let body = word.dropFirst(2)
                    if let equals = body.firstIndex(of: "=") {
                        name = String(body[..<equals])
                        attached = String(body[body.index(after: equals)...])
                    } else {
                        name = String(body)
                    }
                } else if word == "-h" {
                    name = "help"
                } else if word.count == 2, let letter = word.last,
                          let long = command?.options.first(where: { $0.short == letter })?.name {
                    // A command's one-letter alias (`logs -f`).
                    name = long
                } else {
                    throw CommandLineError(.unknownOption, "unknown option '\(word)'", command: command?.name)
                }

                if name == "help" || name == "version" {
                    if attached != nil {
                        throw CommandLineError(.unexpectedValue, "option '--\(name)' does not take a value", command: command?.name)
                    }
                    if name == "help" { wantsHelp = true } else { wantsVersion = true }
                    continue
                }

                let globalSpec = globalSpecs.first { $0.name == name }
                let spec = globalSpec ?? command?.option(named: name)
                guard let spec else {
                    let display = word.split(separator: "=", maxSplits: 1).first.map(String.init) ?? word
                    let known = ((command?.options ?? []) + globalSpecs).filter { !$0.isHidden }.map(\.name) + ["help", "version"]
                    throw CommandLineError(
                        .unknownOption,
                        "unknown option '\(display)'" + Suggestion.hint(for: name, among: known, prefix: "--"),
                        command: command?.name)
                }
                if !spec.takesValue {
                    if attached != nil {
                        throw CommandLineError(.unexpectedValue, "option '--\(name)' does not take a value", command: command?.name)
                    }
                    if globalSpec != nil && name == "json" { global.json = true } else { invocation?.flags.insert(name) }
                    continue
                }
                let value: String
                if let attached {
                    value = attached
                } else if index < arguments.count,
                          !Self.isOptionWord(arguments[index], of: command)
                            || (spec.takesOptionLikeValue && !Self.isKnownOption(arguments[index], of: command, global: globalSpecs)) {
                    value = arguments[index]
                    index += 1
                    valueBefore = (spec, value)
                } else {
                    throw CommandLineError(.missingValue, "missing value for option '--\(name) <\(spec.valueName ?? "value")>'", command: command?.name)
                }
                let parsed = try Self.parse(value, as: spec.kind, what: "option '--\(name)'", placeholder: spec.valueName ?? name, command: command?.name)
                if globalSpec != nil && name == "socket" {
                    global.socket = value
                } else if invocation != nil {
                    // In place: a copy of the invocation per word made a long command line
                    // quadratic (40,000 IDs took 11 s).
                    if spec.isRepeatable {
                        invocation!.values[name, default: []].append(parsed)
                    } else {
                        invocation!.values[name] = [parsed]
                    }
                }
                continue
            }

            // A positional word: first the command, then its arguments.
            guard let current = invocation?.command else {
                guard let spec = commandNamed(word) else {
                    throw CommandLineError(
                        .unknownCommand, "unknown command '\(word)'" + Suggestion.commandHint(for: word, among: commands().map(\.name)))
                }
                command = spec
                invocation = Invocation(command: spec, global: global)
                continue
            }
            if current.isGroup {
                // `queue set`: the word after a group names its subcommand.
                guard let subcommand = current.subcommands.first(where: { $0.word == word }) else {
                    let words = current.subcommands.map(\.word)
                    let hint = Suggestion.hint(for: word, among: words)
                    throw CommandLineError(
                        .unknownCommand,
                        "unknown subcommand '\(word)' of '\(current.name)'"
                            + (hint.isEmpty ? " (its subcommands: \(words.joined(separator: ", ")))" : hint)
                            + Suggestion.listingHint(for: word, group: current.name, commands: commands().map(\.name)),
                        command: current.name)
                }
                command = subcommand
                invocation = Invocation(command: subcommand, global: global)
                continue
            }
            if current.takesTrailingArguments {
                // The job's argv is taken only after `--`, so a mistyped option is never run.
                let hint: String
                let dashesFollow = arguments[index...].contains("--")
                if let (option, value) = previousValue,
                   dashesFollow || (try? Self.parse(value + " " + word, as: option.kind, what: "", placeholder: "", command: nil)) != nil {
                    hint = "quote a value that has spaces (--\(option.name) \(Self.shellQuoted(value + " " + word))), "
                        + "and put a job's command after '--'"
                } else if dashesFollow {
                    hint = "only options go before '--', the job's command after it"
                } else {
                    let given = arguments[..<(index - 1)].map(Self.shellQuoted)
                    let command = arguments[(index - 1)...].map(Self.shellQuoted)
                    hint = "put the job's command after '--' (orchctl \((given + ["--"] + command).joined(separator: " ")))"
                }
                throw CommandLineError(.unexpectedArgument, "unexpected argument '\(word)'; \(hint)", command: current.name)
            }
            invocation!.arguments.append(word)
        }

        if wantsHelp { return .help(command) }
        if wantsVersion { return .version }
        guard var invocation, let command else {
            throw CommandLineError(.missingCommand, "no command given")
        }
        invocation.global = global

        if impliedCommand == nil && command.name == "help" {
            // `help queue set` names a subcommand by its words.
            guard !invocation.arguments.isEmpty else { return .help(nil) }
            let topic = invocation.arguments.joined(separator: " ")
            guard let spec = commands().flatMap(\.flattened).first(where: { $0.name == topic }) else {
                let topics = commands().flatMap(\.flattened).map(\.name)
                throw CommandLineError(
                    .unknownCommand, "unknown command '\(topic)'" + Suggestion.hint(for: topic, among: topics), command: "help")
            }
            return .help(spec)
        }
        if command.isGroup {
            let words = command.subcommands.map(\.word).joined(separator: ", ")
            throw CommandLineError(.missingCommand, "missing subcommand of '\(command.name)': \(words)", command: command.name)
        }

        if global.json, let why = command.withoutJSON {
            throw CommandLineError(.unexpectedValue, "--json: \(why)", command: command.name)
        }
        try Self.checkArguments(invocation.arguments, of: command)
        return .run(invocation)
    }

    // MARK: - Checks

    /// Matches positional words to the command's declared arguments.
    private static func checkArguments(_ words: [String], of command: CommandSpec) throws(CommandLineError) {
        var remaining = words[...]
        for argument in command.arguments {
            switch argument.arity {
            case .one, .oneOrMore:
                guard !remaining.isEmpty else {
                    throw CommandLineError(.missingArgument, "missing argument '<\(argument.name)>'", command: command.name)
                }
            case .optional, .zeroOrMore:
                break
            }
            let count = switch argument.arity {
            case .one: 1
            case .optional: min(1, remaining.count)
            case .zeroOrMore, .oneOrMore: remaining.count
            }
            for word in remaining.prefix(count) {
                _ = try parse(word, as: argument.kind, what: "argument '<\(argument.name)>'", placeholder: argument.name, command: command.name)
            }
            remaining = remaining.dropFirst(count)
        }
        if let extra = remaining.first {
            throw CommandLineError(.unexpectedArgument, "unexpected argument '\(extra)'", command: command.name)
        }
    }

    /// The sign of `text` when it is a whole number written in ASCII digits, with an optional
    /// leading `+` or `-` (as `Int(_:)` reads one), whatever its size; `nil` when it is not.
    private static func wholeNumberSign(_ text: String) -> Int? {
        var digits = Substring(text)
        var sign = 1
        if let first = digits.first, first == "+" || first == "-" {
            sign = first == "-" ? -1 : 1
            digits = digits.dropFirst()
        }
        guard !digits.isEmpty, digits.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return nil }
        return sign
    }

    /// Checks one value against its kind and converts it, once: the command gets the result.
    /// - Parameter placeholder: the value's name in help (`event=command`), for messages
    ///   about its form.
    /// - Throws: ``CommandLineError`` (`invalidValue`) saying what is wrong with it.
    private static func parse(
        _ value: String, as kind: ValueKind, what: String, placeholder: String, command: String?
    ) throws(CommandLineError) -> ParsedValue {
        let result: Result<ParsedValue, Problem> = switch kind {
        case .text: .success(.text(value))
        case .path: value.isEmpty ? .failure(Problem("the path is empty; leave the option out for the default")) : .success(.text(value))
        case .integer:
            if let number = Int(value) {
                .success(.integer(number))
            } else if let sign = Self.wholeNumberSign(value) {
                // Digits past Int's range: a number, and out of range, not malformed.
                .failure(Problem(sign < 0 ? "'\(value)' is too small: at least \(Int.min)" : "'\(value)' is too large: at most \(Int.max)"))
            } else {
                .failure(Problem("'\(value)' is not an integer"))
            }
        case .integerIn(let range):
            if let number = Int(value), range.contains(number) {
                .success(.integer(number))
            } else if Self.wholeNumberSign(value) == 1, Int(value).map({ $0 > range.upperBound }) ?? true {
                // Digits above the range, within Int or past it: one message for both.
                .failure(Problem("'\(value)' is too large: at most \(range.upperBound)"))
            } else if range.upperBound == Int.max {
                .failure(Problem("'\(value)' is not a whole number of at least \(range.lowerBound)"))
            } else {
                .failure(Problem("'\(value)' is not a whole number from \(range.lowerBound) to \(range.upperBound)"))
            }
        case .startTime:
            StartTime.parse(value).map { .success(.startTime($0)) }
                ?? .failure(Problem("'\(value)' is not a time (HH:MM[:SS], a local YYYY-MM-DD [HH:MM[:SS]], or RFC 3339 such as 2030-06-01T08:00:00Z)"))
        case .keyValue:
            KeyValue.split(value).map { .success(.keyValue(key: $0.key, value: $0.value)) }
                ?? .failure(Problem("'\(value)' is not of the form KEY=VALUE"))
        case .queueName:
            QueueName(rawValue: value).map { .success(.queueName($0)) }
                ?? .failure(Problem("'\(value)' is not a valid queue name (\(QueueName.rule))"))
        case .jobID: JobID(parsing: value).map { .success(.jobID($0)) } ?? .failure(Problem("'\(value)' is not a job ID (a positive integer)"))
        case .timeSpan: span(value)
        case .timeSpanIn(let range):
            switch span(value) {
            case .success(.timeSpan(let microseconds)) where range.contains(Duration(microseconds: microseconds)): .success(.timeSpan(microseconds: microseconds))
            case .success: .failure(Problem("'\(value)' is not a time span from \(TimeSpan.format(range.lowerBound)) to \(TimeSpan.format(range.upperBound))"))
            case .failure(let problem): .failure(problem)
            }
        case .keyedValue(let keys):
            if let (key, text) = KeyValue.split(value) {
                keys.contains(key) ? .success(.keyValue(key: key, value: text)) : .failure(Problem("'\(key)' is not one of \(keys.joined(separator: ", "))"))
            } else {
                .failure(Problem("'\(value)' is not of the form \(placeholder.uppercased())"))
            }
        case .choice(let words):
            words.contains(value) ? .success(.text(value)) : .failure(Problem("'\(value)' is not one of \(words.joined(separator: ", "))"))
        case .rule(let rule): rule.problem(value).map { .failure(Problem($0)) } ?? .success(.text(value))
        }
        switch result {
        case .success(let parsed): return parsed
        case .failure(let problem): throw CommandLineError(.invalidValue, "invalid value for \(what): \(problem.message)", command: command)
        }
    }

    /// What is wrong with a value, for the error message.
    private struct Problem: Error {
        let message: String
        init(_ message: String) { self.message = message }
    }

    /// A time span in microseconds, or what is wrong with it.
    private static func span(_ value: String) -> Result<ParsedValue, Problem> {
        do throws(TimeSpan.Invalid) {
            return .success(.timeSpan(microseconds: try TimeSpan.parseMicroseconds(value)))
        } catch {
            return .failure(Problem(error.message))
        }
    }

    /// `-5` is a value (a negative priority), not an option.
    private static func isNegativeNumber(_ word: String) -> Bool {
        word.count > 1 && word.hasPrefix("-") && Int(word) != nil
    }

    /// Whether a word after a value-taking option is another option rather than its value.
    ///
    /// Only words that are options here count: `--anything`, `-h` and the command's one-letter
    /// aliases. Any other word starting with `-` (`-1s`, `-5`, `-x`) is the value, so that its
    /// own check says what is wrong with it (a negative span) instead of "missing value".
    /// Whether a word names an option orchctl knows here (the command's, a global one,
    /// `--help`, `--version`, `-h`, or a one-letter alias), with or without `=VALUE`.
    private static func isKnownOption(_ word: String, of command: CommandSpec?, global: [OptionSpec]) -> Bool {
        guard word.hasPrefix("--") else { return isOptionWord(word, of: command) }
        let name = word.dropFirst(2).split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        if name.isEmpty || name == "help" || name == "version" { return true }
        return global.contains { $0.name == name } || command?.option(named: name) != nil
    }

    private static func isOptionWord(_ word: String, of command: CommandSpec?) -> Bool {
        if word.hasPrefix("--") { return true }
        if word == "-h" { return true }
        guard word.count == 2, word.hasPrefix("-"), let letter = word.last else { return false }
        return command?.options.contains { $0.short == letter } == true
    }
}
