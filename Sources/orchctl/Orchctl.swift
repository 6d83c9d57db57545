import CommandLineParsing
import FoundationEssentials
import OrchestratorAPI
#if canImport(Glibc)
import Glibc
#endif

/// orchctl's whole run: parse, dispatch, report errors, return the exit status to `main`.
enum Orchctl {
    /// The parser over every command.
    static var parser: ArgumentParser {
        ArgumentParser(commands: CommandTable.specs, commandNamed: CommandTable.topLevelSpec(named:))
    }
    /// The help renderer over every command.
    static var helpRenderer: HelpRenderer { HelpRenderer(commands: CommandTable.specs) }

    /// Runs orchctl with `arguments` (without the program name).
    /// - Returns: the exit status.
    static func run(_ arguments: [String], context: CommandContext) -> ExitCode {
        let outcome: ParseOutcome
        do {
            do {
                outcome = try parser.parse(arguments)
            } catch where error.code == .missingCommand && error.command == nil && !arguments.contains("--") {
                // No command at all (only global options, or nothing): `status`, as
                // task-spooler's `ts` lists its queue.
                outcome = try parser.parse(arguments + [StatusCommand.spec.name])
            }
        } catch {
            report(error, context: context)
            return .usage
        }
        switch outcome {
        case .version:
            context.console.print("orchctl \(OrchdVersion.string)")
            return .success
        case .help(let command):
            context.console.write(command.map(helpRenderer.help(for:)) ?? helpRenderer.rootHelp())
            return .success
        case .run(let invocation):
            guard let command = CommandTable.command(named: invocation.command.name) else {
                report(CommandLineError(.unknownCommand, "unknown command '\(invocation.command.name)'"), context: context)
                return .usage
            }
            do {
                return try command.run(invocation, context: context)
            } catch let error as CommandLineError {
                report(error, context: context)
                return .usage
            } catch let failure as CommandFailure {
                // Line by line: a message may quote what the user gave (a name, a path),
                // whose control characters are shown, not sent to the terminal.
                context.console.printError("Error: " + failure.message.split(separator: "\n", omittingEmptySubsequences: false).map { String($0).visible }.joined(separator: "\n"))
                return failure.exitCode
            } catch {
                context.console.printError("Error: \(error)")
                return .failure
            }
        }
    }

    /// Prints a usage error: `Error: …`, `Usage: …`, `See 'orchctl <cmd> --help'.`
    static func report(_ error: CommandLineError, context: CommandContext) {
        let renderer = helpRenderer
        let spec = error.command.flatMap { name in CommandTable.allSpecs.first { $0.name == name } }
        let usage = spec.map(renderer.usage(for:)) ?? renderer.rootUsage
        let helpCommand = spec.map { "orchctl \($0.name) --help" } ?? "orchctl --help"
        // The message quotes what was typed, which may hold control characters.
        context.console.printError("Error: \(error.message.visible)\nUsage: \(usage)\nSee '\(helpCommand)'.")
    }

    /// Runs orchctl with this process's arguments and context. An argument that is not valid
    /// UTF-8 is a usage error: orchd keeps commands, paths and names as UTF-8 text (JSON on
    /// the wire), so such bytes would reach the job changed, without a word.
    /// - Returns: the exit status.
    static func runProcess() -> ExitCode {
        StandardDescriptors.reserve()
        let context = processContext()
        var arguments: [String] = []
        for index in 1..<Int(CommandLine.argc) {
            guard let raw = CommandLine.unsafeArgv[index] else { break }
            guard let argument = String(validatingCString: raw) else {
                let bytes = UnsafeBufferPointer(start: raw, count: strlen(raw)).map { UInt8(bitPattern: $0) }
                report(CommandLineError(
                    .invalidValue,
                    "argument \(index) ('\(Self.escapingBytes(bytes))') is not valid UTF-8; orchd keeps commands, paths and names as UTF-8 text",
                    command: commandName(in: arguments)),
                    context: context)
                return .usage
            }
            arguments.append(argument)
        }
        let status = run(arguments, context: context)
        let outputFailure = Console.standardOutputFailure.load(ordering: .relaxed)
        guard outputFailure != 0 else { return status }
        context.console.printError("Error: cannot write to standard output: \(String(cString: strerror(outputFailure)))")
        // A job's own status (submit --wait) still says how the job ended.
        return status == .success ? .failure : status
    }

    /// The command the arguments before an unreadable one name, for its usage line: the first
    /// word that is neither an option nor the value of `--socket`, with the next word when the
    /// two name a subcommand (`queue add`); `nil` when none names a command.
    static func commandName(in arguments: [String]) -> String? {
        let names = Set(CommandTable.allSpecs.map(\.name))
        var index = 0
        while index < arguments.count, arguments[index].hasPrefix("-") {
            index += arguments[index] == "--socket" ? 2 : 1
        }
        guard index < arguments.count, names.contains(arguments[index]) else { return nil }
        if index + 1 < arguments.count, names.contains(arguments[index] + " " + arguments[index + 1]) {
            return arguments[index] + " " + arguments[index + 1]
        }
        return arguments[index]
    }

    /// `bytes` as text, each byte that is not printable ASCII as `\xNN`.
    static func escapingBytes(_ bytes: [UInt8]) -> String {
        bytes.map { byte in
            guard (0x20..<0x7f).contains(byte), byte != UInt8(ascii: "\\") else {
                return "\\x" + (byte < 0x10 ? "0" : "") + String(byte, radix: 16)
            }
            return String(UnicodeScalar(byte))
        }.joined()
    }

    /// The context of this process: its console, environment, uid and working directory.
    static func processContext() -> CommandContext {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        // A directory whose path is not valid UTF-8 is as good as unreadable: orchd could not
        // be told its name (the job would fail to enter a directory of a changed name).
        let cwd = getcwd(&buffer, buffer.count) != nil ? buffer.withUnsafeBufferPointer { String(validatingCString: $0.baseAddress!) } : nil
        return CommandContext(console: .standard, uid: getuid(), currentDirectory: cwd) { ProcessEnvironment.current }
    }
}
