import Foundation
import OrchestratorAPI

/// Finds the field of a call's parameters whose number its integer type refuses, which
/// `JSONDecoder` does not name.
///
/// The rule, the same on both decoding paths: an integer field takes a number written as an
/// integer (`-?(0|[1-9][0-9]*)`) that its type holds; anything else is
/// `org.varlink.service.InvalidParameter` naming the field (`spec.priority`, `uids.0`).
/// `1e3` and `1.0` are refused like `1.5`: Varlink's `int` is an integer, orchd's parameters
/// have no floating-point field, and only the integer form can carry neither a fraction nor
/// more precision than a `Double`. `JSONDecoder` goes through a `Double` for the other forms:
/// it reads `1e3` as 1000, but `12345678901234567.5` as 12345678901234567, dropping the
/// fraction without a word. ``JSONByteReader/integer()`` (``SubmitDecoder``'s fast path)
/// takes the integer form only and leaves the rest to ``VarlinkMethodCall/parameters(_:)``,
/// which refuses it here, so both paths give the same answer.
///
/// Both searches decode altered copies of the message, and run only when the strict scan
/// has met an ``JSONByteReader/UnusualNumber``: an ordinary call pays nothing.
enum IntegerFieldCheck {
    /// The first field, in message order, holding a number that `JSONDecoder` failed to
    /// convert to the field's type (too large, negative for an unsigned type, a fraction);
    /// its error for that names no field.
    ///
    /// Replacing a number with `0`, which every numeric type holds, removes its failure, so a
    /// bisection over `numbers` (the only ones an integer type may refuse) finds the first
    /// that fails in log2(n) decodes.
    /// - Parameters:
    ///   - type: the parameters' type.
    ///   - message: the call, which failed to decode with an error naming no field.
    ///   - numbers: its unusual numbers, in message order.
    /// - Returns: the field's path (`["parameters", "uids", "0"]`), or `nil` when no number
    ///   is the cause.
    static func fieldRefusingNumber<P: Codable & Sendable>(
        _ type: P.Type, in message: Data, numbers: [JSONByteReader.UnusualNumber]
    ) -> [String]? {
        // Whether the call still fails, naming no field, with only the first `count` numbers kept.
        func fails(keeping count: Int) -> Bool {
            let altered = replacing(numbers[count...], in: message) { _ in Data("0".utf8) }
            do {
                _ = try JSONDecoder().decode(VarlinkCall<P>.self, from: altered)
                return false
            } catch DecodingError.dataCorrupted(let context) {
                return context.codingPath.isEmpty
            } catch {
                return false
            }
        }
        guard !numbers.isEmpty, !fails(keeping: 0) else { return nil }
        var passing = 0, failing = numbers.count
        while failing - passing > 1 {
            let middle = (passing + failing) / 2
            if fails(keeping: middle) { failing = middle } else { passing = middle }
        }
        return numbers[failing - 1].path
    }

    /// The first field, in decoding order, that `JSONDecoder` read as a number although it
    /// is not written as an integer (`1e3`, `1.0`); the call decoded without error.
    ///
    /// Each such number is given as a string instead: where the parameters read a number the
    /// decoder then fails naming the field; a member this version does not read takes it.
    /// - Parameters:
    ///   - type: the parameters' type.
    ///   - message: the call, which decoded.
    ///   - numbers: its unusual numbers, in message order.
    /// - Returns: the field's path, or `nil` when no integer field holds such a number.
    static func fieldNotWrittenAsInteger<P: Codable & Sendable>(
        _ type: P.Type, in message: Data, numbers: [JSONByteReader.UnusualNumber]
    ) -> [String]? {
        let forms = numbers.filter { !$0.isIntegerForm }
        guard !forms.isEmpty else { return nil }
        let quote = Data("\"".utf8)
        let altered = replacing(forms[...], in: message) { quote + $0 + quote }
        do {
            _ = try JSONDecoder().decode(VarlinkCall<P>.self, from: altered)
            return nil
        } catch DecodingError.typeMismatch(_, let context) {
            let path = context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }
            return forms.contains { $0.path == path } ? path : nil
        } catch {
            return nil
        }
    }

    /// `message` with each of `numbers` (in message order) replaced by `replacement` of its bytes.
    private static func replacing(
        _ numbers: ArraySlice<JSONByteReader.UnusualNumber>, in message: Data, by replacement: (Data) -> Data
    ) -> Data {
        var altered = Data()
        altered.reserveCapacity(message.count + 2 * numbers.count)
        var position = message.startIndex
        for number in numbers {
            let range = (message.startIndex + number.range.lowerBound)..<(message.startIndex + number.range.upperBound)
            altered += message[position..<range.lowerBound]
            altered += replacement(message[range])
            position = range.upperBound
        }
        altered += message[position...]
        return altered
    }
}
