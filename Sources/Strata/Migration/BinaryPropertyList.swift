import Foundation

/// A value of a binary property list (`bplist00`), as `NSKeyedArchiver` writes them, with its
/// object references (`CF$UID`) kept as ``uid(_:)``.
///
/// Foundation's `PropertyListSerialization` reads these files too, but on Linux it returns each
/// UID as an internal type whose number cannot be read, and a keyed archive is made of them.
enum PropertyListValue {
    case null
    case bool(Bool)
    case integer(Int64)
    case real(Double)
    case date(Date)
    case data(Data)
    case string(String)
    /// A keyed archive's reference to an entry of its `$objects`.
    case uid(Int)
    case array([PropertyListValue])
    case dictionary([String: PropertyListValue])

    /// The string, if this is one.
    var string: String? {
        if case .string(let text) = self { return text }
        return nil
    }
}

/// Reads binary property lists (Apple's `bplist00` format): a header, the objects, a table of
/// their offsets and a 32-byte trailer naming the top object.
///
/// Every offset, count and reference is checked against the data, nesting is bounded and each
/// object is read once however often it is referenced, so a corrupt or hostile file is a
/// ``ModelError`` and never a crash, an endless loop or an exponential expansion.
final class BinaryPropertyList {
    private let bytes: [UInt8]
    /// The objects read so far, by index.
    private var read: [Int: PropertyListValue] = [:]
    private let offsets: [Int]
    private let referenceSize: Int
    /// How deep arrays and dictionaries may nest.
    private static let maximumDepth = 256

    /// Parses `data` and returns its top object.
    ///
    /// - Parameter path: the file the data came from, for errors.
    /// - Throws: ``ModelError`` `invalidValue` when `data` is not a well-formed binary property list.
    static func parse(_ data: Data, path: String?) throws -> PropertyListValue {
        let list = try BinaryPropertyList(bytes: [UInt8](data), path: path)
        return try list.object(list.topObject, depth: 0, path: path)
    }

    private let topObject: Int

    private init(bytes: [UInt8], path: String?) throws {
        func fail(_ reason: String) -> ModelError {
            ModelError(.invalidValue, "not a binary property list: \(reason)", path: path)
        }
        guard bytes.count >= 40, bytes.starts(with: Array("bplist00".utf8)) else { throw fail("no bplist00 header") }
        let trailer = bytes.count - 32
        let offsetSize = Int(bytes[trailer + 6])
        referenceSize = Int(bytes[trailer + 7])
        let count = Self.unsigned(bytes[(trailer + 8)..<(trailer + 16)])
        let top = Self.unsigned(bytes[(trailer + 16)..<(trailer + 24)])
        let table = Self.unsigned(bytes[(trailer + 24)..<(trailer + 32)])
        guard (1...8).contains(offsetSize), (1...8).contains(referenceSize), count > 0, count < UInt64(trailer),
            top < count, table >= 8, table <= UInt64(trailer), (UInt64(trailer) - table) / UInt64(offsetSize) >= count
        else { throw fail("its trailer does not fit the data") }
        var offsets: [Int] = []
        offsets.reserveCapacity(Int(count))
        for index in 0..<Int(count) {
            let start = Int(table) + index * offsetSize
            let offset = Self.unsigned(bytes[start..<(start + offsetSize)])
            guard offset >= 8, offset < table else { throw fail("object \(index) lies outside the data") }
            offsets.append(Int(offset))
        }
        self.bytes = bytes
        self.offsets = offsets
        self.topObject = Int(top)
    }

    /// A big-endian unsigned integer.
    private static func unsigned(_ slice: ArraySlice<UInt8>) -> UInt64 {
        slice.reduce(0) { $0 << 8 | UInt64($1) }
    }

    private func fail(_ reason: String, _ path: String?) -> ModelError {
        ModelError(.invalidValue, "malformed binary property list: \(reason)", path: path)
    }

    /// The bytes `start..<start+length`, checked against the object table's start.
    private func span(_ start: Int, _ length: Int, _ path: String?) throws -> ArraySlice<UInt8> {
        guard length >= 0, start <= bytes.count - 32, length <= bytes.count - 32 - start else {
            throw fail("a value runs past the end of the data", path)
        }
        return bytes[start..<(start + length)]
    }

    /// The object at `index` of the offset table.
    private func object(_ index: Int, depth: Int, path: String?) throws -> PropertyListValue {
        guard index >= 0, index < offsets.count else {
            throw fail("a reference to object \(index) of \(offsets.count)", path)
        }
        guard depth < Self.maximumDepth else { throw fail("containers nest deeper than \(Self.maximumDepth)", path) }
        if let value = read[index] { return value }
        let value = try parseObject(index, depth: depth, path: path)
        read[index] = value
        return value
    }

    /// Parses the object at `index`.
    private func parseObject(_ index: Int, depth: Int, path: String?) throws -> PropertyListValue {
        let start = offsets[index]
        let marker = bytes[start]
        let low = Int(marker & 0x0F)
        switch marker >> 4 {
        case 0x0:
            switch marker {
            case 0x00: return .null
            case 0x08: return .bool(false)
            case 0x09: return .bool(true)
            default: throw fail("unknown marker \(marker)", path)
            }
        case 0x1:
            let size = 1 << low
            guard size <= 16 else { throw fail("an integer of \(size) bytes", path) }
            let field = try span(start + 1, size, path)
            // Eight bytes are signed; a 16-byte integer keeps its low eight.
            return .integer(Int64(bitPattern: Self.unsigned(field.suffix(8))))
        case 0x2:
            switch low {
            case 2: return .real(Double(Float(bitPattern: UInt32(Self.unsigned(try span(start + 1, 4, path))))))
            case 3: return .real(Double(bitPattern: Self.unsigned(try span(start + 1, 8, path))))
            default: throw fail("a real of \(1 << low) bytes", path)
            }
        case 0x3:
            guard marker == 0x33 else { throw fail("unknown marker \(marker)", path) }
            let seconds = Double(bitPattern: Self.unsigned(try span(start + 1, 8, path)))
            return .date(Date(timeIntervalSinceReferenceDate: seconds))
        case 0x4:
            let (count, body) = try length(low, at: start, path)
            return .data(Data(try span(body, count, path)))
        case 0x5:
            let (count, body) = try length(low, at: start, path)
            guard let text = String(bytes: try span(body, count, path), encoding: .ascii) else {
                throw fail("an ASCII string that is not ASCII", path)
            }
            return .string(text)
        case 0x6:
            let (count, body) = try length(low, at: start, path)
            guard count <= Int.max / 2 else { throw fail("a string too long", path) }
            let field = try span(body, count * 2, path)
            let units = stride(from: field.startIndex, to: field.endIndex, by: 2).map {
                UInt16(field[$0]) << 8 | UInt16(field[$0 + 1])
            }
            return .string(String(decoding: units, as: UTF16.self))
        case 0x8:
            guard let index = Int(exactly: Self.unsigned(try span(start + 1, low + 1, path))) else {
                throw fail("a UID too large to refer to an object", path)
            }
            return .uid(index)
        case 0xA, 0xC:
            let (count, body) = try length(low, at: start, path)
            return .array(try references(count, at: body, path).map { try object($0, depth: depth + 1, path: path) })
        case 0xD:
            let (count, body) = try length(low, at: start, path)
            let keys = try references(count, at: body, path)
            let values = try references(count, at: body + count * referenceSize, path)
            var dictionary: [String: PropertyListValue] = [:]
            for (key, value) in zip(keys, values) {
                guard let name = try object(key, depth: depth + 1, path: path).string else {
                    throw fail("a dictionary key that is not a string", path)
                }
                dictionary[name] = try object(value, depth: depth + 1, path: path)
            }
            return .dictionary(dictionary)
        default:
            throw fail("unknown marker \(marker)", path)
        }
    }

    /// The element count of a container or string whose marker's low nibble is `low`, and where
    /// its body starts: the nibble itself, or an integer object after the marker when it is 15.
    private func length(_ low: Int, at start: Int, _ path: String?) throws -> (count: Int, body: Int) {
        guard low == 0x0F else { return (low, start + 1) }
        let marker = try span(start + 1, 1, path).first!
        guard marker >> 4 == 0x1, marker & 0x0F <= 3 else { throw fail("a length that is not an integer", path) }
        let size = 1 << Int(marker & 0x0F)
        let count = Self.unsigned(try span(start + 2, size, path))
        guard count <= UInt64(bytes.count) else { throw fail("a length of \(count)", path) }
        return (Int(count), start + 2 + size)
    }

    /// `count` object references starting at `start`.
    private func references(_ count: Int, at start: Int, _ path: String?) throws -> [Int] {
        guard count <= bytes.count / referenceSize else { throw fail("a container of \(count) elements", path) }
        let field = try span(start, count * referenceSize, path)
        return try stride(from: field.startIndex, to: field.endIndex, by: referenceSize).map {
            // An eight-byte reference past `Int.max` refers to no object; `object(_:)` rejects
            // every other one past the table.
            guard let index = Int(exactly: Self.unsigned(field[$0..<($0 + referenceSize)])) else {
                throw fail("a reference too large to name an object", path)
            }
            return index
        }
    }
}
