import Foundation

/// An `NSKeyedArchiver` archive (a binary property list of `$objects` that refer to each other
/// by UID), read without the Objective-C classes it names: what Xcode writes for a compiled
/// mapping model (`.cdm`) and for each expression and user info dictionary in a mapping model's
/// `xcmapping.xml`.
///
/// ``value(_:)`` gives the Foundation values (strings, numbers, data, dates, UUIDs, URLs,
/// arrays, sets and dictionaries); ``object(_:)`` gives any other object's class name and
/// fields, for the caller to decode. References are followed with a bound on depth and on the
/// references one value resolves in all, so a cyclic or hostile archive is a ``ModelError`` and
/// never a crash, an endless loop or an exponential expansion.
struct KeyedArchive {
    /// An archived object of a class the caller decodes: its class name and encoded fields.
    struct Object {
        /// The class name, such as `NSFunctionExpression`.
        let className: String
        /// The fields by key, references still unresolved.
        let fields: [String: PropertyListValue]

        /// The field `key`, or `nil`.
        subscript(_ key: String) -> PropertyListValue? { fields[key] }
    }

    private let objects: [PropertyListValue]
    /// The archive's root reference.
    let root: PropertyListValue
    /// The file the archive came from, for errors.
    let path: String?
    /// How deep references may nest.
    private static let maximumDepth = 200
    /// How many references one value (or expression) may resolve in all: an archive refers to
    /// each object once however often it is used, so a few objects that each use the next twice
    /// read as a tree of 2^n nodes.
    static let maximumResolutions = 100_000

    /// Reads an archive from `data`.
    ///
    /// - Throws: ``ModelError`` `invalidValue` when `data` is not a keyed archive.
    init(data: Data, path: String?) throws {
        guard case .dictionary(let top) = try BinaryPropertyList.parse(data, path: path),
            top["$archiver"]?.string == "NSKeyedArchiver", case .array(let objects)? = top["$objects"],
            case .dictionary(let roots)? = top["$top"], let root = roots["root"]
        else {
            throw ModelError(.invalidValue, "not an NSKeyedArchiver archive with a root object", path: path)
        }
        self.objects = objects
        self.root = root
        self.path = path
    }

    /// An error naming the archive's file.
    func failure(_ reason: String) -> ModelError {
        ModelError(.invalidValue, "malformed keyed archive: \(reason)", path: path)
    }

    /// The entry a reference names, or the value itself when it is not a reference.
    private func resolve(_ reference: PropertyListValue) throws -> PropertyListValue {
        guard case .uid(let index) = reference else { return reference }
        guard index >= 0, index < objects.count else {
            throw failure("a reference to object \(index) of \(objects.count)")
        }
        return objects[index]
    }

    /// The object a reference names, with its class; `nil` for `$null`.
    ///
    /// - Throws: ``ModelError`` when the reference is not to an object with a class.
    func object(_ reference: PropertyListValue) throws -> Object? {
        let entry = try resolve(reference)
        if entry.string == "$null" { return nil }
        guard case .dictionary(let fields) = entry, let classReference = fields["$class"],
            case .dictionary(let classEntry) = try resolve(classReference),
            let className = classEntry["$classname"]?.string
        else { throw failure("an object without a class") }
        return Object(className: className, fields: fields)
    }

    /// The Foundation value a reference names: `nil` for `$null` and `NSNull`, a `String`, an
    /// integer (`Int`), `Double`, `Bool`, `Data`, `Date`, `UUID`, `URL`, an array, a set
    /// (`Set<AnyHashable>`) or a dictionary (`[AnyHashable: Any]`).
    ///
    /// - Throws: ``ModelError`` for any other class, or a malformed value.
    func value(_ reference: PropertyListValue) throws -> Any? {
        var budget = Self.maximumResolutions
        return try value(reference, depth: 0, budget: &budget)
    }

    /// The Foundation value a reference names, as ``value(_:)``, resolving at most `budget` more
    /// references.
    func value(_ reference: PropertyListValue, depth: Int, budget: inout Int) throws -> Any? {
        guard depth < Self.maximumDepth else { throw failure("references nest deeper than \(Self.maximumDepth)") }
        guard budget > 0 else {
            throw failure("a value of more than \(Self.maximumResolutions) objects (its objects refer to each other over and over)")
        }
        budget -= 1
        let entry = try resolve(reference)
        switch entry {
        case .null: return nil
        case .bool(let flag): return flag
        case .integer(let number): return Int(number)
        case .real(let number): return number
        case .date(let date): return date
        case .data(let data): return data
        case .string(let text): return text == "$null" ? nil : text
        case .uid: throw failure("a reference to a reference")
        case .array(let elements): return try elements.map { try value($0, depth: depth + 1, budget: &budget) }
        case .dictionary: break
        }
        guard let object = try object(entry) else { return nil }
        func field(_ key: String) throws -> Any? {
            try object[key].flatMap { try value($0, depth: depth + 1, budget: &budget) }
        }
        func elements(_ key: String) throws -> [Any?] {
            guard let field = object[key] else { return [] }
            guard case .array(let references) = try resolve(field) else { throw failure("\(key) is not an array") }
            return try references.map { try value($0, depth: depth + 1, budget: &budget) }
        }
        switch object.className {
        case "NSNull":
            return nil
        case "NSString", "NSMutableString":
            guard let text = try field("NS.string") as? String else { throw failure("a string without text") }
            return text
        case "NSData", "NSMutableData":
            guard let data = try field("NS.data") as? Data else { throw failure("data without bytes") }
            return data
        case "NSDate":
            guard let seconds = try field("NS.time") as? Double else { throw failure("a date without a time") }
            return Date(timeIntervalSinceReferenceDate: seconds)
        case "NSUUID":
            guard let bytes = try field("NS.uuidbytes") as? Data, bytes.count == 16 else {
                throw failure("a UUID without 16 bytes")
            }
            return bytes.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }
        case "NSURL":
            guard let text = try field("NS.relative") as? String else { throw failure("a URL without text") }
            let base = try field("NS.base") as? URL
            guard let url = URL(string: text, relativeTo: base) else { throw failure("the URL \(text)") }
            return url
        case "NSArray", "NSMutableArray", "NSOrderedSet", "NSMutableOrderedSet":
            return try elements("NS.objects")
        case "NSSet", "NSMutableSet":
            return Set(try elements("NS.objects").map { try hashable($0) })
        case "NSDictionary", "NSMutableDictionary":
            let keys = try elements("NS.keys")
            let values = try elements("NS.objects")
            guard keys.count == values.count else {
                throw failure("a dictionary with \(keys.count) keys and \(values.count) values")
            }
            var dictionary: [AnyHashable: Any] = [:]
            for (key, element) in zip(keys, values) { dictionary[try hashable(key)] = element }
            return dictionary
        default:
            throw failure("an object of the class \(object.className), which is not a property list value")
        }
    }

    /// A set element or dictionary key as `AnyHashable`.
    private func hashable(_ value: Any?) throws -> AnyHashable {
        guard let hashable = value as? AnyHashable else { throw failure("a set element or key that cannot be hashed") }
        return hashable
    }

    /// The array a reference names, its elements unresolved; empty for `$null`.
    func references(_ reference: PropertyListValue?) throws -> [PropertyListValue] {
        guard let reference, let object = try object(reference) else { return [] }
        guard let field = object["NS.objects"], case .array(let elements) = try resolve(field) else {
            throw failure("\(object.className) where an array belongs")
        }
        return elements
    }
}
