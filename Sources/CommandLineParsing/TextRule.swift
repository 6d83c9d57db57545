/// A check of a text value by a rule the declaring program owns (``ValueKind/rule(_:)``): the
/// parser applies it like its own kinds, so a bad value is a usage error with the rule's
/// reason, and the program reads a value that its own type accepts.
///
/// Rules are told apart by ``name`` (a closure cannot be compared): give each rule its own.
public struct TextRule: Hashable, Sendable {
    /// The rule's name; two rules with the same name are the same rule.
    public let name: String
    /// Why the text is refused (a sentence to follow "invalid value for ...: "), or `nil`
    /// when it is accepted.
    public let problem: @Sendable (String) -> String?

    /// Creates a rule.
    /// - Parameters:
    ///   - name: the rule's name, unique among the program's rules.
    ///   - problem: why a text is refused, or `nil` when it is accepted.
    public init(_ name: String, problem: @escaping @Sendable (String) -> String?) {
        self.name = name
        self.problem = problem
    }

    public static func == (left: TextRule, right: TextRule) -> Bool { left.name == right.name }

    public func hash(into hasher: inout Hasher) { hasher.combine(name) }
}
