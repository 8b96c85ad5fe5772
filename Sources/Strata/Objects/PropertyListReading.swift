import Foundation

/// Reads the property lists a store holds (its metadata, composite attributes, transformable
/// values) as `PropertyListSerialization` returns them: numbers as `NSNumber`, booleans as
/// `Bool`, arrays as `[Any]`, dictionaries as `[String: Any]`, and strings, data and dates as
/// themselves.
///
/// A binary property list, the form the store writes, is read by ``BinaryPropertyList``, which
/// throws on a damaged one where Foundation's reader on Linux can crash (as the model-file
/// fuzzer found for `.xccurrentversion` files). Any other form (XML, OpenStep) goes to
/// Foundation.
enum PropertyListReading {
    /// The property list in `data`, read from the file `path` (for errors) when it has one.
    ///
    /// - Throws: ``ModelError`` `invalidValue` when a binary property list is malformed, or
    ///   Foundation's error when another form does not parse.
    static func object(from data: Data, path: String? = nil) throws -> Any {
        guard data.starts(with: binaryHeader) else {
            return try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
        }
        return try BinaryPropertyList.parse(data, path: path).foundationValue
    }

    /// The first bytes of a binary property list.
    private static let binaryHeader = Array("bplist".utf8)
}

extension PropertyListValue {
    /// The value as `PropertyListSerialization` returns it; a keyed archive's UID is the
    /// dictionary `["CF$UID": n]` that stands for it in an XML property list.
    var foundationValue: Any {
        switch self {
        case .null: NSNull()
        case .bool(let value): value
        case .integer(let value): NSNumber(value: value)
        case .real(let value): NSNumber(value: value)
        case .date(let value): value
        case .data(let value): value
        case .string(let value): value
        case .uid(let value): ["CF$UID": NSNumber(value: value)] as [String: Any]
        case .array(let values): values.map(\.foundationValue)
        case .dictionary(let values): values.mapValues(\.foundationValue)
        }
    }
}
