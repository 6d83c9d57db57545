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
                context.console.printError("Error: \(failure.message)")
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
        context.console.printError("Error: \(error.message)\nUsage: \(usage)\nSee '\(helpCommand)'.")
    }

    /// The context of this process: its console, environment, uid and working directory.
    static func processContext() -> CommandContext {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let cwd = getcwd(&buffer, buffer.count) != nil
            ? String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            : nil
        return CommandContext(
            console: .standard, uid: getuid(), currentDirectory: cwd, readEnvironment: processEnvironment,
            readEnvironmentChanges: processEnvironmentChanges)
    }

    /// The process environment, read from `environ` once, at the first use (orchctl never
    /// changes it; the socket's path and a submit's spec both read it).
    @Sendable static func processEnvironment() -> [String: String] { environmentAtFirstUse.environment }

    /// What reading the environment had to change, one line each (``EnvironmentRead/changes``).
    @Sendable static func processEnvironmentChanges() -> [String] { environmentAtFirstUse.changes }

    private static let environmentAtFirstUse = EnvironmentRead(environ)

    /// The environment as orchd can store it (UTF-8 text, names distinct as Swift strings),
    /// and what that changed.
    struct EnvironmentRead {
        var environment: [String: String] = [:]
        /// A line per variable the job will not get exactly: bytes that are not UTF-8 (sent
        /// with U+FFFD in their place), or a name equal to an earlier one as a Swift string but
        /// not byte for byte (left out).
        var changes: [String] = []

        /// Reads `entries`, a NULL-terminated `environ` array (the first of duplicate names,
        /// as getenv(3) finds it). Not through `ProcessInfo`, whose set-up costs more than the
        /// read. Sized before the first insertion: growing the table rehashed every name at
        /// each doubling, a sixth of a submit.
        init(_ entries: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) {
            var count = 0
            while entries[count] != nil { count += 1 }
            environment.reserveCapacity(count)
            var entry = entries
            while let pointer = entry.pointee {
                // Split at the first '=' byte: walking the string by Characters (grapheme
                // breaking) was a third of a submit's instructions.
                let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(pointer).assumingMemoryBound(to: UInt8.self), count: strlen(pointer))
                entry += 1
                guard let equals = bytes.firstIndex(of: UInt8(ascii: "=")) else { continue }
                let nameBytes = UnsafeBufferPointer(rebasing: bytes[..<equals])
                let valueBytes = UnsafeBufferPointer(rebasing: bytes[(equals + 1)...])
                let name = String(decoding: nameBytes, as: UTF8.self)
                if let index = environment.index(forKey: name) {
                    var earlier = environment[index].key
                    if !earlier.withUTF8({ $0.elementsEqual(nameBytes) }) {
                        changes.append("'\(name)' is the same name as '\(earlier)' to orchd (Unicode canonical equivalence): the job gets only the first")
                    }
                    continue
                }
                var value = String(decoding: valueBytes, as: UTF8.self)
                // Decoding replaced bytes that are not UTF-8 when the text differs from them
                // (cheaper than validating the bytes a second time).
                var decodedName = name
                if !decodedName.withUTF8({ $0.elementsEqual(nameBytes) }) || !value.withUTF8({ $0.elementsEqual(valueBytes) }) {
                    changes.append("'\(name)' is not valid UTF-8: the job gets it with U+FFFD in place of the bytes that are not")
                }
                environment[name] = value
            }
        }
    }
}
