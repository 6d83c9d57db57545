/// A positional argument of a command, declared as data.
struct ArgumentSpec: Hashable, Sendable {
    /// How many words the argument takes.
    enum Arity: Hashable, Sendable {
        case one, optional, zeroOrMore, oneOrMore
    }

    /// The placeholder in help and messages (`id` renders `<id>`).
    var name: String
    /// What each word must look like.
    var kind: ValueKind
    /// How many words.
    var arity: Arity
    /// One sentence for help, ending with a period.
    var help: String

    /// `<id>`, `<id> ...` or `[<id> ...]`, as help shows it.
    var label: String {
        switch arity {
        case .one: "<\(name)>"
        case .optional: "[<\(name)>]"
        case .zeroOrMore: "[<\(name)> ...]"
        case .oneOrMore: "<\(name)> ..."
        }
    }
}
