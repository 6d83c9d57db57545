/// The "did you mean" of an unknown command or option: the known names close to a mistyped
/// one, as git and cargo offer them.
///
/// A name is close when it is a few edits away (insertions, deletions, substitutions and
/// swaps of two neighbours, the optimal string alignment distance): at most one edit for a
/// word of up to four characters, two for a longer one, so that short words do not match
/// everything. A word of three or more characters that begins exactly one name is close to
/// it too (`orchctl sub` → `submit`).
enum Suggestion {
    /// The known names closest to `word`, best first: every name at the smallest distance,
    /// at most two of them; empty when none is close.
    /// - Parameters:
    ///   - word: what was typed, without dashes.
    ///   - names: the names it could have meant, in the order help lists them.
    static func names(closeTo word: String, among names: [String]) -> [String] {
        let typed = Array(word.unicodeScalars)
        guard !typed.isEmpty else { return [] }
        let limit = typed.count <= 4 ? 1 : 2
        var best: [String] = []
        var bestDistance = limit + 1
        for name in names where name != word {
            let distance = Self.distance(typed, Array(name.unicodeScalars), limit: limit)
            guard distance <= limit else { continue }
            if distance < bestDistance {
                bestDistance = distance
                best = [name]
            } else if distance == bestDistance && !best.contains(name) {
                best.append(name)
            }
        }
        if best.isEmpty, typed.count >= 3 {
            let extensions = names.filter { $0 != word && $0.hasPrefix(word) }
            if extensions.count == 1 { best = extensions }
        }
        return Array(best.prefix(2))
    }

    /// What users of pueue, task-spooler, systemctl and the shell type for orchctl's commands:
    /// a word that is not close to the right name by spelling is still answered by meaning.
    static let synonyms: [String: String] = [
        "add": "submit", "enqueue": "release", "stash": "hold", "kill": "cancel", "remove": "cancel",
        "rm": "cancel", "stop": "cancel", "clean": "prune", "restart": "retry", "start": "resume",
        "follow": "logs", "ls": "status", "list": "status", "ps": "status", "group": "queue",
        "groups": "queues", "version": "--version",
    ]

    /// The sentence to append to an "unknown command" message: the command a pueue, systemctl
    /// or shell word means (``synonyms``) first, when it is one of `names` or an option, then
    /// the names close by spelling (`stop`: 'cancel' or 'top'); at most two.
    static func commandHint(for word: String, among names: [String]) -> String {
        var close = Self.names(closeTo: word, among: names)
        if let meant = synonyms[word.lowercased()], meant.hasPrefix("--") || names.contains(meant) {
            close = [meant] + close.filter { $0 != meant }
        }
        guard !close.isEmpty else { return "" }
        return "; did you mean " + close.prefix(2).map { "'\($0)'" }.joined(separator: " or ") + "?"
    }

    /// The sentence to append to an "unknown subcommand" message of group `group` when `word`
    /// asks for a listing (`queue list`) and `commands` has the plural that lists (`queues`).
    static func listingHint(for word: String, group: String, commands: [String]) -> String {
        guard ["list", "ls", "show", "status"].contains(word.lowercased()), commands.contains(group + "s") else { return "" }
        return "; 'orchctl \(group)s' lists them"
    }

    /// The sentence to append to an "unknown ..." message: `; did you mean 'status'?`, or
    /// an empty string when nothing is close.
    /// - Parameters:
    ///   - word: what was typed, without dashes.
    ///   - names: the names it could have meant.
    ///   - prefix: put before each name in the sentence (`--` for options).
    static func hint(for word: String, among names: [String], prefix: String = "") -> String {
        let close = Self.names(closeTo: word, among: names).map { "'\(prefix)\($0)'" }
        guard !close.isEmpty else { return "" }
        return "; did you mean \(close.joined(separator: " or "))?"
    }

    /// The optimal string alignment distance of `a` and `b`, or `limit + 1` once it is known
    /// to exceed `limit`.
    private static func distance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar], limit: Int) -> Int {
        guard abs(a.count - b.count) <= limit else { return limit + 1 }
        guard !a.isEmpty, !b.isEmpty else { return max(a.count, b.count) }
        // Three rows of the edit-distance table: the one before the previous (for swaps),
        // the previous and the current.
        var beforePrevious = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            var rowMinimum = i
            for j in 1...b.count {
                let substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)
                var value = min(previous[j] + 1, current[j - 1] + 1, substitution)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    value = min(value, beforePrevious[j - 2] + 1)
                }
                current[j] = value
                rowMinimum = min(rowMinimum, value)
            }
            if rowMinimum > limit { return limit + 1 }
            (beforePrevious, previous, current) = (previous, current, beforePrevious)
        }
        return min(previous[b.count], limit + 1)
    }
}
