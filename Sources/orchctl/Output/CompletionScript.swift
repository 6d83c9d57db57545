import CommandLineParsing
/// Shell completion scripts for bash, zsh and fish, written from the command table, so every
/// command and option help lists is completed and none that does not exist.
///
/// Values are completed by their ``ValueKind``: fixed words for a choice, files for a path,
/// and queue names and job IDs asked of orchd (`orchctl --json queues`, `orchctl --json
/// status`, with the `--socket` already typed), quietly nothing when it cannot be reached.
struct CompletionScript: Sendable {
    /// The shells a script can be written for.
    enum Shell: String, CaseIterable, Sendable {
        case bash, zsh, fish
    }

    /// The top-level commands (a group carries its subcommands).
    var commands: [CommandSpec]
    /// The options every command takes.
    var globalOptions: [OptionSpec] = GlobalOptions.specs + [GlobalOptions.help]

    /// The script for `shell`.
    func script(for shell: Shell) -> String {
        switch shell {
        case .bash: bash()
        case .zsh: zsh()
        case .fish: fish()
        }
    }

    /// Every command and subcommand that runs (groups run only through a subcommand).
    private var runnable: [CommandSpec] { commands.flatMap(\.flattened) }

    /// The shell words listing job IDs (from `status --json`), given `$socket` words.
    private static let jobIDsPipeline =
        #"orchctl $socket --json status --limit 200 2>/dev/null | sed -n 's/^    "id" : \([0-9][0-9]*\).*/\1/p'"#
    /// The shell words listing queue names (from `queues --json`).
    private static let queueNamesPipeline =
        #"orchctl $socket --json queues 2>/dev/null | sed -n 's/^    "name" : "\(.*\)".*/\1/p'"#

    // MARK: - bash

    private func bash() -> String {
        var text = """
            # bash completion for orchctl; generated from its command table by 'orchctl completion bash'.
            # Load it with: source <(orchctl completion bash)

            _orchctl_values() {
                # $1: the value kind; prints the candidate words.
                local socket=$2
                case $1 in
                    jobID) \(Self.jobIDsPipeline) ;;
                    queueName) \(Self.queueNamesPipeline) ;;
                    choice:*) printf '%s\\n' ${1#choice:} ;;
                esac
            }

            _orchctl() {
                local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
                local command="" socket="" kind="" i word
                for ((i = 1; i < COMP_CWORD; i++)); do
                    word=${COMP_WORDS[i]}
                    case $word in
                        --socket) socket="--socket ${COMP_WORDS[i+1]}"; ((i++)) ;;
                        --) break ;;
                        -*) ;;
                        *)
                            if [[ -z $command ]]; then command=$word
                            elif [[ " \(commands.filter(\.isGroup).map(\.name).joined(separator: " ")) " == *" $command "* && $command != *" "* ]]; then command="$command $word"
                            fi ;;
                    esac
                done
                local options="" arguments="" kinds=""
                case $command in

            """
        for command in runnable {
            let options = (command.options + globalOptions.filter(command.accepts(global:))).map { "--" + $0.name }.joined(separator: " ")
            let argument = command.isGroup
                ? "choice:" + command.subcommands.map(\.word).joined(separator: " ")
                : command.arguments.first.map { Self.kindWord($0.kind) } ?? ""
            var kinds: [String] = []
            for option in command.options + globalOptions.filter(command.accepts(global:)) where option.takesValue {
                kinds.append("--\(option.name)) kind=\(Self.quoted(Self.kindWord(option.kind))) ;;")
            }
            text += "            \(Self.quoted(command.name)))\n"
            text += "                options=\(Self.quoted(options)); arguments=\(Self.quoted(argument))\n"
            text += "                case $prev in \(kinds.joined(separator: " ")) esac ;;\n"
        }
        let topLevel = commands.map(\.name).joined(separator: " ")
        let globals = globalOptions.map { "--" + $0.name }.joined(separator: " ") + " --version"
        text += """
                    *) options=\(Self.quoted(globals)); arguments=\(Self.quoted("choice:" + topLevel))
                       [[ $prev == --socket ]] && kind=path ;;
                esac
                case ${kind:-} in
                    path) COMPREPLY=($(compgen -f -- "$cur")); return ;;
                    text|timeSpan|integer|keyValue|startTime) COMPREPLY=(); return ;;
                    ?*) COMPREPLY=($(compgen -W "$(_orchctl_values "$kind" "$socket")" -- "$cur")); return ;;
                esac
                if [[ $cur == -* ]]; then
                    COMPREPLY=($(compgen -W "$options" -- "$cur"))
                elif [[ $arguments == path || $arguments == text ]]; then
                    COMPREPLY=($(compgen -f -- "$cur"))
                elif [[ -n $arguments ]]; then
                    COMPREPLY=($(compgen -W "$(_orchctl_values "$arguments" "$socket")" -- "$cur"))
                fi
            }

            complete -F _orchctl orchctl

            """
        return text
    }

    // MARK: - zsh

    private func zsh() -> String {
        var text = """
            #compdef orchctl
            # zsh completion for orchctl; generated from its command table by 'orchctl completion zsh'.
            # Put it in a directory of $fpath as _orchctl, or load it with: source <(orchctl completion zsh)

            _orchctl_socket() {
                local i
                for ((i = 2; i < CURRENT; i++)); do
                    [[ ${words[i]} == --socket ]] && { print -r -- "--socket ${words[i+1]}"; return; }
                done
            }
            _orchctl_jobs() {
                local socket=$(_orchctl_socket)
                local -a ids; ids=(${(f)"$(\(Self.jobIDsPipeline.replacingSocket("${=socket}")))"})
                _describe 'job ID' ids
            }
            _orchctl_queues() {
                local socket=$(_orchctl_socket)
                local -a names; names=(${(f)"$(\(Self.queueNamesPipeline.replacingSocket("${=socket}")))"})
                _describe 'queue' names
            }

            _orchctl() {
                local -a commands global
                commands=(

            """
        for command in commands {
            text += "        \(Self.quoted(command.name + ":" + command.abstract.replacingAll(":", with: "\\:")))\n"
        }
        text += "    )\n    global=(\n"
        for option in globalOptions {
            text += "        \(Self.quoted(Self.zshOption(option)))\n"
            if let short = option.short {
                text += "        \(Self.quoted("-\(short)" + Self.zshOption(option).dropFirst(2 + option.name.count)))\n"
            }
        }
        text += """
                )
                local index=2
                while (( index < CURRENT )) && [[ ${words[index]} == -* ]]; do
                    [[ ${words[index]} == --socket ]] && (( index++ ))
                    (( index++ ))
                done
                if (( CURRENT <= index )); then
                    _describe 'command' commands
                    _arguments $global
                    return
                fi
                local command=${words[index]}

            """
        for group in commands where group.isGroup {
            text += "    if [[ $command == \(Self.quoted(group.name)) ]]; then\n"
            text += "        if (( CURRENT == index + 1 )); then\n"
            text += "            local -a subcommands; subcommands=("
            text += group.subcommands.map { Self.quoted($0.word + ":" + $0.abstract.replacingAll(":", with: "\\:")) }.joined(separator: " ")
            text += ")\n            _describe 'subcommand' subcommands; return\n        fi\n"
            text += "        command=\"$command ${words[index+1]}\"; (( index++ ))\n    fi\n"
        }
        text += "    (( CURRENT -= index - 1 )); shift $(( index - 1 )) words\n"
        text += "    case $command in\n"
        for command in runnable where !command.isGroup {
            var specs = (command.options + globalOptions.filter(command.accepts(global:))).map { Self.quoted(Self.zshOption($0)) }
            if let argument = command.arguments.first {
                let repeated = argument.arity == .zeroOrMore || argument.arity == .oneOrMore
                specs.append(Self.quoted((repeated ? "*" : "1") + ":\(argument.name):" + Self.zshAction(argument.kind)))
            }
            text += "        \(Self.quoted(command.name))) _arguments \(specs.joined(separator: " ")) ;;\n"
        }
        text += """
                esac
            }

            if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
                _orchctl "$@"
            else
                compdef _orchctl orchctl
            fi

            """
        return text
    }

    private static func zshOption(_ option: OptionSpec) -> String {
        let help = option.help.replacingAll("\\", with: "\\\\").replacingAll("[", with: "\\[").replacingAll("]", with: "\\]")
            .replacingAll(":", with: "\\:")
        let repeatable = option.isRepeatable ? "*" : ""
        guard let valueName = option.valueName else { return "\(repeatable)--\(option.name)[\(help)]" }
        return "\(repeatable)--\(option.name)=[\(help)]:\(valueName):\(zshAction(option.kind))"
    }

    private static func zshAction(_ kind: ValueKind) -> String {
        switch kind {
        case .jobID: "_orchctl_jobs"
        case .queueName: "_orchctl_queues"
        case .path: "_files"
        case .choice(let words): "(\(words.joined(separator: " ")))"
        case .keyedValue(let keys): "(\(keys.map { $0 + "=" }.joined(separator: " ")))"
        case .text: "_files"
        default: " "
        }
    }

    // MARK: - fish

    private func fish() -> String {
        var text = """
            # fish completion for orchctl; generated from its command table by 'orchctl completion fish'.
            # Load it with: orchctl completion fish | source

            function __orchctl_socket
                set -l words (commandline -opc)
                set -l index (contains -i -- --socket $words)
                and echo --socket $words[(math $index + 1)]
            end
            function __orchctl_jobs
                set -l socket (__orchctl_socket)
                \(Self.jobIDsPipeline.replacingSocket("$socket"))
            end
            function __orchctl_queues
                set -l socket (__orchctl_socket)
                \(Self.queueNamesPipeline.replacingSocket("$socket"))
            end
            function __orchctl_command
                # The command words typed so far (a group and its subcommand count as one).
                set -l words (commandline -opc)
                set -l found
                set -l skip 0
                for word in $words[2..-1]
                    if test $skip = 1; set skip 0; continue; end
                    switch $word
                        case --socket; set skip 1
                        case '-*'
                        case '*'
                            set -a found $word
                    end
                end
                echo $found[1..2]
            end
            function __orchctl_is
                set -l command (__orchctl_command)
                test "$command" = "$argv"; or string match -q -- "$argv *" "$command"
            end
            function __orchctl_exactly
                set -l command (__orchctl_command)
                test "$command" = "$argv"
            end

            complete -c orchctl -f

            """
        for option in globalOptions {
            text += "complete -c orchctl" + Self.fishOption(option) + "\n"
        }
        text += "complete -c orchctl -l version -d \(Self.fishQuoted(GlobalOptions.version.help))\n"
        let names = commands.map(\.name).joined(separator: " ")
        for command in commands {
            text += "complete -c orchctl -n 'not __fish_seen_subcommand_from \(names)' -a \(Self.fishQuoted(command.name)) -d \(Self.fishQuoted(command.abstract))\n"
        }
        for command in runnable {
            let condition = " -n \(Self.fishQuoted("__orchctl_is " + command.name))"
            if command.isGroup {
                for sub in command.subcommands {
                    text += "complete -c orchctl -n \(Self.fishQuoted("__orchctl_exactly " + command.name)) -a \(Self.fishQuoted(sub.word)) -d \(Self.fishQuoted(sub.abstract))\n"
                }
                continue
            }
            for option in command.options {
                text += "complete -c orchctl\(condition)" + Self.fishOption(option) + "\n"
            }
            if let argument = command.arguments.first {
                text += "complete -c orchctl\(condition) \(Self.fishArgument(argument.kind))\n"
            }
        }
        return text
    }

    private static func fishOption(_ option: OptionSpec) -> String {
        var text = option.short.map { " -s \($0)" } ?? ""
        text += " -l \(option.name)"
        if option.takesValue { text += " -r " + fishArgument(option.kind) }
        return text + " -d \(fishQuoted(option.help))"
    }

    private static func fishArgument(_ kind: ValueKind) -> String {
        switch kind {
        case .jobID: "-a '(__orchctl_jobs)'"
        case .queueName: "-a '(__orchctl_queues)'"
        case .path, .text, .rule: "-F"
        case .choice(let words): "-a \(fishQuoted(words.joined(separator: " ")))"
        case .keyedValue(let keys): "-a \(fishQuoted(keys.map { $0 + "=" }.joined(separator: " ")))"
        default: "-x"
        }
    }

    // MARK: - Words

    /// The kind as the bash script's `_orchctl_values` reads it.
    private static func kindWord(_ kind: ValueKind) -> String {
        switch kind {
        case .text: "text"
        case .path: "path"
        case .integer, .integerIn: "integer"
        case .rule(let rule): "text:" + rule.name
        case .keyValue: "keyValue"
        case .keyedValue(let keys): "choice:" + keys.map { $0 + "=" }.joined(separator: " ")
        case .queueName: "queueName"
        case .jobID: "jobID"
        case .timeSpan, .timeSpanIn: "timeSpan"
        case .startTime: "startTime"
        case .choice(let words): "choice:" + words.joined(separator: " ")
        }
    }

    /// `text` in single quotes for sh, bash and zsh.
    static func quoted(_ text: String) -> String {
        "'" + text.replacingAll("'", with: #"'\''"#) + "'"
    }

    /// `text` in single quotes for fish, where a quote inside is `\'` and a backslash `\\`.
    static func fishQuoted(_ text: String) -> String {
        "'" + text.replacingAll("\\", with: "\\\\").replacingAll("'", with: "\\'") + "'"
    }
}

extension String {
    /// Every occurrence of `target` replaced (FoundationEssentials has no
    /// `replacingOccurrences`).
    fileprivate func replacingAll(_ target: String, with replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }

    /// A completion pipeline with its `$socket` words spelled for another shell.
    fileprivate func replacingSocket(_ words: String) -> String {
        replacingAll("$socket", with: words)
    }
}
