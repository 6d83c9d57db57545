/// A command's options as one typed value, declared field by field with ``OptionBinding``s
/// (swift-argument-parser's `@Option var queue: QueueName` is the model, declared as data
/// here): the parser checks and converts each value once, help is rendered from the same
/// declarations, and the command reads typed fields, never an option by its name.
///
/// ```swift
/// struct Options: CommandOptions {
///     var queue = QueueName.default
///     var follow = false
///     static let bindings: [OptionBinding<Options>] = [
///         .value(\.queue, "queue", "queue", kind: .queueName, help: "The queue."),
///         .flag(\.follow, "follow", help: "Keep going."),
///     ]
/// }
/// let options = Options(decoding: invocation)
/// ```
public protocol CommandOptions: Sendable {
    /// Every field's default.
    init()
    /// The options, in the order help lists them.
    static var bindings: [OptionBinding<Self>] { get }
}

extension CommandOptions {
    /// The declarations the parser and help renderer use.
    @inlinable public static var specs: [OptionSpec] { bindings.map(\.spec) }

    /// The options of `invocation`: each given option's parsed value stored in its field, in
    /// command-line order (a later value of a single option wins); absent ones keep their
    /// defaults.
    @inlinable public init(decoding invocation: Invocation) {
        self.init()
        for binding in Self.bindings {
            if binding.spec.takesValue {
                for value in invocation.values[binding.spec.name] ?? [] {
                    binding.apply(&self, value)
                }
            } else if invocation.flags.contains(binding.spec.name) {
                binding.apply(&self, .text(""))
            }
        }
    }
}

/// Options for a command that has none.
public struct NoOptions: CommandOptions {
    /// None.
    public init() {}
    public static let bindings: [OptionBinding<NoOptions>] = []
}

/// One option of a command: its declaration (``OptionSpec``, for the parser and help) and the
/// field of the command's ``CommandOptions`` its value goes into.
///
/// The declaring functions are `@inlinable`: specialized in the program that declares its
/// options, a field's key path becomes a direct store, where an unspecialized call from
/// another module instantiates every key path at run time, at each start of orchctl.
public struct OptionBinding<Options: CommandOptions>: Sendable {
    /// The declaration.
    public let spec: OptionSpec
    /// Stores one parsed value in the field.
    public let apply: @Sendable (inout Options, ParsedValue) -> Void

    /// An option whose value `apply` stores itself, for a field that is not one of the
    /// shapes below (a value kept in two fields, or one converted on the way in).
    @inlinable public init(spec: OptionSpec, apply: @escaping @Sendable (inout Options, ParsedValue) -> Void) {
        self.spec = spec
        self.apply = apply
    }

    /// This option, taking a next word that looks like an option as its value unless it is
    /// one of the command's (``OptionSpec/takesOptionLikeValue``).
    public func takingOptionLikeValue() -> OptionBinding {
        var spec = spec
        spec.takesOptionLikeValue = true
        return OptionBinding(spec: spec, apply: apply)
    }

    /// An option whose value goes into an optional field (`nil` when absent).
    @inlinable public static func value<Value: OptionValue>(
        _ field: WritableKeyPath<Options, Value?> & Sendable, _ name: String, _ valueName: String, kind: ValueKind = .text,
        help: String, default defaultValue: String? = nil
    ) -> OptionBinding {
        OptionBinding(spec: .value(name, valueName, kind: kind, help: help, default: defaultValue)) { options, parsed in
            options[keyPath: field] = Self.convert(parsed, name)
        }
    }

    /// An option whose value replaces a field's default.
    @inlinable public static func value<Value: OptionValue>(
        _ field: WritableKeyPath<Options, Value> & Sendable, _ name: String, _ valueName: String, kind: ValueKind = .text,
        help: String, default defaultValue: String? = nil
    ) -> OptionBinding {
        OptionBinding(spec: .value(name, valueName, kind: kind, help: help, default: defaultValue)) { options, parsed in
            options[keyPath: field] = Self.convert(parsed, name)
        }
    }

    /// A repeatable option whose values accumulate, in order.
    @inlinable public static func values<Value: OptionValue>(
        _ field: WritableKeyPath<Options, [Value]> & Sendable, _ name: String, _ valueName: String, kind: ValueKind = .text,
        help: String
    ) -> OptionBinding {
        OptionBinding(spec: .value(name, valueName, kind: kind, help: help, repeatable: true)) { options, parsed in
            options[keyPath: field].append(Self.convert(parsed, name))
        }
    }

    /// A repeatable `KEY=VALUE` option, later keys winning.
    @inlinable public static func keyValues(
        _ field: WritableKeyPath<Options, [String: String]> & Sendable, _ name: String, _ valueName: String,
        kind: ValueKind = .keyValue, help: String
    ) -> OptionBinding {
        OptionBinding(spec: .value(name, valueName, kind: kind, help: help, repeatable: true)) { options, parsed in
            guard case .keyValue(let key, let value) = parsed else { preconditionFailure("--\(name) is declared as KEY=VALUE") }
            options[keyPath: field][key] = value
        }
    }

    /// A flag: the field is `true` when it was given.
    @inlinable public static func flag(
        _ field: WritableKeyPath<Options, Bool> & Sendable, _ name: String, short: Character? = nil, help: String,
        hidden: Bool = false
    ) -> OptionBinding {
        OptionBinding(spec: .flag(name, short: short, help: help, hidden: hidden)) { options, _ in
            options[keyPath: field] = true
        }
    }

    /// The typed value; the parser produced it from the option's own kind, so a mismatch is
    /// a declaration pairing a field with the wrong kind.
    @usableFromInline static func convert<Value: OptionValue>(_ parsed: ParsedValue, _ name: String) -> Value {
        guard let value = Value(parsed: parsed) else { preconditionFailure("--\(name) is declared with a kind its field cannot hold") }
        return value
    }
}
