/// A positional argument of a command, declared as data.
public struct ArgumentSpec: Hashable, Sendable {
    /// How many words the argument takes.
    public enum Arity: Hashable, Sendable {
        case one, optional, zeroOrMore, oneOrMore
    }

    /// The placeholder in help and messages (`id` renders `<id>`).
    public var name: String
    /// What each word must look like.
    public var kind: ValueKind
    /// How many words.
    public var arity: Arity
    /// One sentence for help, ending with a period.
    public var help: String

    /// Declares an argument.
    public init(name: String, kind: ValueKind, arity: Arity, help: String) {
        self.name = name
        self.kind = kind
        self.arity = arity
        self.help = help
    }

    /// `<id>`, `<id> ...` or `[<id> ...]`, as help shows it.
    public var label: String {
        switch arity {
        case .one: "<\(name)>"
        case .optional: "[<\(name)>]"
        case .zeroOrMore: "[<\(name)> ...]"
        case .oneOrMore: "<\(name)> ..."
        }
    }
}
