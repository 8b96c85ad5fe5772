import Foundation

/// An object to archive under an Apple class name, with its keyed fields: strings, integers,
/// Booleans, data, other archived objects, and arrays and dictionaries of them.
final class AppleArchived {
    let appleClass: String
    var fields: [(String, Any)]

    init(_ appleClass: String, _ fields: [(String, Any)] = []) {
        self.appleClass = appleClass
        self.fields = fields
    }
}

/// Keyed archives shaped as Apple's `NSKeyedArchiver` writes them (a binary property list of
/// `$objects` referring to each other by UID, Apple's class names and keys): what an Xcode
/// mapping model (`xcmapping.xml`) and a compiled mapping model (`.cdm`) hold.
///
/// Written here rather than with Foundation's `NSKeyedArchiver`, which on Linux names every
/// class by its Swift name and ignores `setClassName(_:for:)`.
enum AppleArchives {
    /// The archive of `root`.
    static func archive(_ root: Any) -> Data {
        var writer = Writer()
        let top = writer.reference(root)
        return BinaryPlist.data(
            .dictionary([
                ("$version", .integer(100_000)), ("$archiver", .string("NSKeyedArchiver")),
                ("$top", .dictionary([("root", top)])), ("$objects", .array(writer.objects)),
            ]))
    }

    /// The Base64 text of an archive, as `xcmapping.xml` holds it.
    static func base64(_ root: Any) -> String { archive(root).base64EncodedString() }

    // MARK: - NSExpression, as Foundation encodes it

    static func variable(_ name: String) -> AppleArchived {
        AppleArchived("NSVariableExpression", [("NSExpressionType", 2), ("NSVariable", name)])
    }

    static func constant(_ value: Any) -> AppleArchived {
        AppleArchived("NSConstantValueExpression", [("NSExpressionType", 0), ("NSConstantValue", value)])
    }

    /// `operand.keyPath` (`SELF` by default): a function expression of `valueForKeyPath:` whose
    /// argument is a key path specifier.
    static func keyPath(
        _ keyPath: String, on operand: AppleArchived = AppleArchived("NSSelfExpression", [("NSExpressionType", 1)])
    ) -> AppleArchived {
        AppleArchived(
            "NSKeyPathExpression",
            [
                ("NSExpressionType", 3), ("NSOperand", operand), ("NSSelectorName", "valueForKeyPath:"),
                (
                    "NSArguments",
                    [AppleArchived("NSKeyPathSpecifierExpression", [("NSExpressionType", 10), ("NSKeyPath", keyPath)])]
                ),
            ])
    }

    /// `FUNCTION(target, "selector", arguments…)`.
    static func function(_ target: AppleArchived, _ selector: String, _ arguments: [AppleArchived]) -> AppleArchived {
        AppleArchived(
            "NSFunctionExpression",
            [("NSExpressionType", 4), ("NSOperand", target), ("NSSelectorName", selector), ("NSArguments", arguments)])
    }

    /// Lays objects out as `$objects` entries: index 0 is `$null`; each archived object (once,
    /// however often it is referenced), string, data, array and dictionary is an entry.
    private struct Writer {
        var objects: [BinaryPlist.Value] = [.string("$null")]
        private var indexes: [ObjectIdentifier: Int] = [:]
        private var classes: [String: Int] = [:]

        /// The reference to `value`'s entry.
        mutating func reference(_ value: Any?) -> BinaryPlist.Value {
            switch value {
            case nil: return .uid(0)
            case let object as AppleArchived:
                if let index = indexes[ObjectIdentifier(object)] { return .uid(index) }
                let index = append(.string("placeholder"))
                indexes[ObjectIdentifier(object)] = index
                var entry: [(String, BinaryPlist.Value)] = [("$class", classReference(object.appleClass))]
                for (key, field) in object.fields {
                    switch field {
                    case let flag as Bool: entry.append((key, .bool(flag)))
                    case let number as Int: entry.append((key, .integer(number)))
                    default: entry.append((key, reference(field)))
                    }
                }
                objects[index] = .dictionary(entry)
                return .uid(index)
            case let text as String: return .uid(append(.string(text)))
            case let number as Int: return .uid(append(.integer(number)))
            case let data as Data: return .uid(append(.data(data)))
            case let array as [Any]:
                let elements = array.map { reference($0) }
                return .uid(
                    append(.dictionary([("$class", classReference("NSArray")), ("NS.objects", .array(elements))])))
            case let dictionary as [String: Any]:
                let keys = dictionary.keys.sorted()
                let entry: [(String, BinaryPlist.Value)] = [
                    ("$class", classReference("NSDictionary")), ("NS.keys", .array(keys.map { reference($0) })),
                    ("NS.objects", .array(keys.map { reference(dictionary[$0]) })),
                ]
                return .uid(append(.dictionary(entry)))
            default:
                fatalError("cannot archive \(value!)")
            }
        }

        private mutating func append(_ entry: BinaryPlist.Value) -> Int {
            objects.append(entry)
            return objects.count - 1
        }

        /// The reference to the class entry of `name`.
        private mutating func classReference(_ name: String) -> BinaryPlist.Value {
            if let index = classes[name] { return .uid(index) }
            let index = append(
                .dictionary([
                    ("$classname", .string(name)), ("$classes", .array([.string(name), .string("NSObject")])),
                ]))
            classes[name] = index
            return .uid(index)
        }
    }
}

/// Writes binary property lists (`bplist00`), UIDs included: 8-byte offsets, 4-byte references.
enum BinaryPlist {
    indirect enum Value {
        case bool(Bool)
        case integer(Int)
        case data(Data)
        case string(String)
        case uid(Int)
        case array([Value])
        case dictionary([(String, Value)])
    }

    /// The file of `top`.
    static func data(_ top: Value) -> Data {
        var table: [[UInt8]] = []
        func add(_ value: Value) -> Int {
            let index = table.count
            table.append([])
            var bytes: [UInt8]
            switch value {
            case .bool(let flag): bytes = [flag ? 0x09 : 0x08]
            case .integer(let number): bytes = [0x13] + bigEndian(UInt64(bitPattern: Int64(number)), 8)
            case .data(let data): bytes = header(0x40, data.count) + [UInt8](data)
            case .string(let text) where text.allSatisfy(\.isASCII):
                bytes = header(0x50, text.utf8.count) + Array(text.utf8)
            case .string(let text):
                let units = Array(text.utf16)
                bytes = header(0x60, units.count) + units.flatMap { bigEndian(UInt64($0), 2) }
            case .uid(let index): bytes = [0x83] + bigEndian(UInt64(index), 4)
            case .array(let elements):
                let references = elements.map(add)
                bytes = header(0xA0, references.count) + references.flatMap { bigEndian(UInt64($0), 4) }
            case .dictionary(let entries):
                let keys = entries.map { add(.string($0.0)) }
                let values = entries.map { add($0.1) }
                bytes = header(0xD0, entries.count) + (keys + values).flatMap { bigEndian(UInt64($0), 4) }
            }
            table[index] = bytes
            return index
        }
        let top = add(top)
        var output: [UInt8] = Array("bplist00".utf8)
        var offsets: [Int] = []
        for bytes in table {
            offsets.append(output.count)
            output += bytes
        }
        let tableStart = output.count
        for offset in offsets { output += bigEndian(UInt64(offset), 8) }
        output += [0, 0, 0, 0, 0, 0, 8, 4]
        output += bigEndian(UInt64(table.count), 8) + bigEndian(UInt64(top), 8) + bigEndian(UInt64(tableStart), 8)
        return Data(output)
    }

    /// A marker with its count: in the low nibble, or 15 and an 8-byte integer object after it.
    private static func header(_ marker: UInt8, _ count: Int) -> [UInt8] {
        count < 15 ? [marker | UInt8(count)] : [marker | 0x0F, 0x13] + bigEndian(UInt64(count), 8)
    }

    private static func bigEndian(_ value: UInt64, _ size: Int) -> [UInt8] {
        (0..<size).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
    }
}
