import Foundation
import Synchronization

/// Finds the model key path (`salary`, `department.name`) that a Swift key path of a
/// `ManagedObject` subclass reads, so that Foundation `#Predicate`s and `SortDescriptor`s can be
/// translated to key-based predicates and sort descriptors.
///
/// Swift on Linux cannot name the property behind a key path (Core Data uses the Objective-C
/// key-value coding string; `String(describing:)` of a computed property's key path prints only
/// an address when the symbol is not exported, as in executables and test bundles). So the key
/// path is read on probe instances of the subclass whose `@Managed` properties hold distinct
/// sentinel values: the value read back names the property. Probes are built on entities of
/// their own, one per class, so no model is needed; every key path is probed once and the
/// answer cached.
///
/// Only key paths whose value type can hold a sentinel (the attribute types, optionals,
/// subclasses and sets or arrays of them) are read, and a single-component key path (all that
/// `#Predicate` makes: it splits `$0.department?.name` into one key path per property) only when
/// it is writable, as `@Managed` properties are: read-only computed properties are never run;
/// their key paths have no name and predicates on them are evaluated in memory.
enum ManagedKeyPathNames {
    /// The model key path `keyPath` reads, or `nil` when it reads none (a computed property, a
    /// non-managed stored property, a key path of more than ``maximumComponents`` components).
    static func name(of keyPath: AnyKeyPath) -> String? {
        if let known = cache.lock.withLock({ cache.answers[keyPath] }) { return known }
        let name = probe(keyPath)
        cache.lock.withLock {
            if cache.answers.count < maximumCacheCount { cache.answers[keyPath] = name }
        }
        return name
    }

    /// The most components a probed key path may have (`holder.department.name` has three).
    static let maximumComponents = 3

    private static let maximumCacheCount = 4096

    // @unchecked: `answers` is only touched with `lock` held; key paths are immutable.
    private final class Cache: @unchecked Sendable {
        let lock = NSLock()
        var answers: [AnyKeyPath: String?] = [:]
    }

    private static let cache = Cache()

    private static func probe(_ keyPath: AnyKeyPath) -> String? {
        let keyPathType = type(of: keyPath)
        guard let root = keyPathType.rootType as? ManagedObject.Type,
            keyPathType.valueType is any KeyPathProbeValue.Type
        else { return nil }
        let components = componentCount(keyPath)
        guard components > 0, components <= maximumComponents, components > 1 || isWritable(keyPath) else { return nil }
        var candidates: Set<String>?
        var rounds = 2
        var round = 0
        while round < rounds {
            let probe = KeyPathProbe(round: round, depth: components)
            let object = probe.object(of: root, path: [], depth: 0)
            guard let value = object[keyPath: keyPath] else { return nil }
            let found = probe.paths(matching: value)
            candidates = candidates.map { $0.intersection(found) } ?? found
            guard let current = candidates, !current.isEmpty else { return nil }
            // Booleans have two values: enough rounds to tell every Boolean property apart by
            // its bits, each bit twice (plain and complemented) so a constant never matches.
            if round == 0 { rounds = max(2, 2 * (Int.bitWidth - (probe.booleanCount + 1).leadingZeroBitCount)) }
            round += 1
        }
        guard let candidates, candidates.count == 1 else { return nil }
        return candidates.first
    }

    /// Whether `keyPath` can write (as the key path of a `@Managed` property can).
    private static func isWritable(_ keyPath: AnyKeyPath) -> Bool {
        keyPath is any WritableKeyPathMarker
    }

    /// The number of components of `keyPath`, from its description (`\Employee.<computed 0x…
    /// (Optional<Department>)>?.<computed 0x… (String)>?` has two); 0 when it cannot be read.
    static func componentCount(_ keyPath: AnyKeyPath) -> Int {
        let root = "\\" + String(describing: type(of: keyPath).rootType)
        let text = String(describing: keyPath)
        guard text.hasPrefix(root) else { return 0 }
        var nesting = 0
        var dots = 0
        for character in text.dropFirst(root.count) {
            switch character {
            case "<", "(", "[": nesting += 1
            case ">", ")", "]": nesting -= 1
            case "." where nesting == 0: dots += 1
            default: break
            }
        }
        return dots
    }
}

/// Marks the writable key path classes, which are generic: a cast to the protocol tells them
/// apart from read-only key paths whatever their root and value types.
protocol WritableKeyPathMarker {}
extension ReferenceWritableKeyPath: WritableKeyPathMarker {}

/// One round of probing: probe objects with sentinel values, and which model key path each
/// sentinel stands for.
final class KeyPathProbe {
    let round: Int
    /// How many relationships from the root probe objects hold sentinels.
    let depth: Int
    private var counter = 0
    private var sentinels: [AnyHashable: String] = [:]
    private var booleans: [(path: String, value: Bool)] = []

    init(round: Int, depth: Int) {
        self.round = round
        self.depth = depth
    }

    /// How many Boolean properties the probe objects have.
    var booleanCount: Int { booleans.count }

    /// A new number for a sentinel: unique in the round, different in the next round, small
    /// enough for `Int16`, and unlikely to be a simple function of another sentinel.
    func nextNumber() -> Int {
        counter += 1
        return round % 2 == 0 ? 101 + counter * 7 : 5_003 + counter * 11
    }

    /// A new string for a sentinel: letters and digits only (valid in a URL too), in both cases
    /// so that a case-changing computed property does not read back as the property itself.
    func nextString() -> String { "StrataProbe\(round)x\(nextNumber())" }

    /// Records that `value` is the sentinel of `path`.
    func record(_ value: AnyHashable, path: [String]) {
        sentinels[value] = path.joined(separator: ".")
    }

    /// The value of the next Boolean property at `path`: bits of its position, the plain bit in
    /// even rounds and the complement in odd ones.
    func nextBoolean(path: [String]) -> Bool {
        let position = booleans.count + 1
        let value = (position >> (round / 2)) & 1 == 1
        let result = round % 2 == 0 ? value : !value
        booleans.append((path.joined(separator: "."), result))
        return result
    }

    /// The model key paths whose sentinel is `value`.
    func paths(matching value: Any) -> Set<String> {
        guard let unwrapped = ProbeOptional.unwrap(value) else { return [] }
        if let bool = unwrapped as? Bool {
            return Set(booleans.filter { $0.value == bool }.map(\.path))
        }
        guard let hashable = unwrapped as? AnyHashable, let path = sentinels[hashable] else { return [] }
        return [path]
    }

    /// A probe object of `type` whose `@Managed` properties hold sentinels, when it is less than
    /// ``depth`` relationships from the root (deeper objects hold nothing).
    func object(of type: ManagedObject.Type, path: [String], depth: Int) -> ManagedObject {
        let schema = KeyPathProbeSchema.of(type)
        guard depth < self.depth else { return type.init(entity: schema.shell, insertInto: nil) }
        let object = type.init(entity: schema.full, insertInto: nil)
        for (slot, property) in schema.properties.enumerated() {
            object.values[slot] = property.sentinel(self, path + [property.name], depth + 1)
        }
        return object
    }
}

/// The `@Managed` properties of a subclass, found by reflection on an instance, and the entities
/// its probe instances are made of. One per class, kept for the life of the process (so the
/// entities' identities, under which the class is registered, are never reused).
final class KeyPathProbeSchema: @unchecked Sendable {
    // @unchecked: every property is immutable after init, and the entities are never mutated.
    /// An entity with no properties, for instances that are only reflected on.
    let shell: EntityDescription
    /// An entity with one untyped attribute per `@Managed` property, in ``properties`` order.
    let full: EntityDescription
    /// The `@Managed` properties.
    let properties: [(name: String, sentinel: (KeyPathProbe, [String], Int) -> Any?)]

    private init(_ type: ManagedObject.Type) {
        let name = "StrataKeyPathProbe." + String(reflecting: type)
        shell = EntityDescription(name: name + ".shell")
        var properties: [(name: String, sentinel: (KeyPathProbe, [String], Int) -> Any?)] = []
        var mirror: Mirror? = Mirror(reflecting: type.init(entity: shell, insertInto: nil))
        while let current = mirror {
            for child in current.children {
                guard let wrapper = child.value as? any ManagedWrapperProbing, let label = child.label else { continue }
                let key = wrapper.modelKey ?? (label.hasPrefix("_") ? String(label.dropFirst()) : label)
                if !properties.contains(where: { $0.name == key }) { properties.append((key, wrapper.sentinel)) }
            }
            mirror = current.superclassMirror
        }
        self.properties = properties
        full = EntityDescription(
            name: name, properties: properties.map { AttributeDescription(name: $0.name, type: .transformable) })
    }

    private static let schemas = Mutex<[ObjectIdentifier: KeyPathProbeSchema]>([:])

    /// The schema of `type`, built once.
    static func of(_ type: ManagedObject.Type) -> KeyPathProbeSchema {
        if let known = schemas.withLock({ $0[ObjectIdentifier(type)] }) { return known }
        let schema = KeyPathProbeSchema(type)
        return schemas.withLock { schemas in
            if let known = schemas[ObjectIdentifier(type)] { return known }
            schemas[ObjectIdentifier(type)] = schema
            return schema
        }
    }
}

/// What a probe needs of a `@Managed` wrapper: its explicit model name and a sentinel of its type.
protocol ManagedWrapperProbing {
    /// The name given with `@Managed("name")`, if any.
    var modelKey: String? { get }
    /// A sentinel of the property's type for `path`, or `nil` when the type cannot hold one.
    func sentinel(_ probe: KeyPathProbe, _ path: [String], _ depth: Int) -> Any?
}

extension Managed: ManagedWrapperProbing {
    var modelKey: String? {
        for child in Mirror(reflecting: self).children where child.label == "key" {
            return child.value as? String
        }
        return nil
    }

    func sentinel(_ probe: KeyPathProbe, _ path: [String], _ depth: Int) -> Any? {
        guard let type = Value.self as? any KeyPathProbeValue.Type else { return nil }
        return type.probeValue(probe, path: path, depth: depth)
    }
}

/// A type a probe can make sentinels of.
protocol KeyPathProbeValue {
    /// A new sentinel, recorded in `probe` as standing for `path`.
    static func probeValue(_ probe: KeyPathProbe, path: [String], depth: Int) -> Self?
}

extension KeyPathProbeValue where Self: Hashable {
    /// Records `value` as the sentinel of `path` and returns it.
    static func recorded(_ value: Self?, _ probe: KeyPathProbe, _ path: [String]) -> Self? {
        if let value { probe.record(value, path: path) }
        return value
    }
}

extension KeyPathProbeValue where Self: BinaryInteger {
    static func probeValue(_ probe: KeyPathProbe, path: [String], depth: Int) -> Self? {
        recorded(Self(exactly: probe.nextNumber()), probe, path)
    }
}

extension Int: KeyPathProbeValue {}
extension Int16: KeyPathProbeValue {}
extension Int32: KeyPathProbeValue {}
extension Int64: KeyPathProbeValue {}

extension Double: KeyPathProbeValue {
    static func probeValue(_ probe: KeyPathProbe, path: [String], depth: Int) -> Double? {
        recorded(Double(probe.nextNumber()) + 0.5, probe, path)
    }
}

extension Float: KeyPathProbeValue {
    static func probeValue(_ probe: KeyPathProbe, path: [String], depth: Int) -> Float? {
        recorded(Float(probe.nextNumber()) + 0.5, probe, path)
    }
}

extension Decimal: KeyPathProbeValue {
    static func probeValue(_ probe: KeyPathProbe, path: [String], depth: Int) -> Decimal? {
        recorded(Decimal(probe.nextNumber()) + Decimal(0.25), probe, path)
    }
}

extension String: KeyPathProbeValue {
    static func probeValue(_ probe: KeyPathProbe, path: [String], depth: Int) -> String? {
        recorded(probe.nextString(), probe, path)
    }
}

extension Date: KeyPathProbeValue {
    static func probeValue(_ probe: KeyPathProbe, path: [String], depth: Int) -> Date? {
        recorded(Date(timeIntervalSinceReferenceDate: Double(probe.nextNumber())), probe, path)
    }
}

extension Data: KeyPathProbeValue {
    static func probeValue(_ probe: KeyPathProbe, path: [String], depth: Int) -> Data? {
        recorded(Data(probe.nextString().utf8), probe, path)
    }
}

extension UUID: KeyPathProbeValue {
    static func probeValue(_ probe: KeyPathProbe, path: [String], depth: Int) -> UUID? {
        recorded(UUID(uuidString: String(format: "00000000-0000-4000-8000-%012d", probe.nextNumber())), probe, path)
    }
}

extension URL: KeyPathProbeValue {
    static func probeValue(_ probe: KeyPathProbe, path: [String], depth: Int) -> URL? {
        recorded(URL(string: "https://strata.invalid/" + probe.nextString()), probe, path)
    }
}

extension Bool: KeyPathProbeValue {
    static func probeValue(_ probe: KeyPathProbe, path: [String], depth: Int) -> Bool? {
        probe.nextBoolean(path: path)
    }
}

extension Optional: KeyPathProbeValue where Wrapped: KeyPathProbeValue {
    static func probeValue(_ probe: KeyPathProbe, path: [String], depth: Int) -> Wrapped?? {
        .some(Wrapped.probeValue(probe, path: path, depth: depth))
    }
}

extension ManagedObject: KeyPathProbeValue {
    static func probeValue(_ probe: KeyPathProbe, path: [String], depth: Int) -> Self? {
        let object = probe.object(of: self, path: path, depth: depth)
        probe.record(object, path: path)
        return object as? Self
    }
}

extension Set: KeyPathProbeValue where Element: KeyPathProbeValue {
    static func probeValue(_ probe: KeyPathProbe, path: [String], depth: Int) -> Set<Element>? {
        guard let element = Element.probeValue(probe, path: path, depth: depth) else { return nil }
        return recorded([element], probe, path)
    }
}

extension Array: KeyPathProbeValue where Element: KeyPathProbeValue & Hashable {
    static func probeValue(_ probe: KeyPathProbe, path: [String], depth: Int) -> [Element]? {
        guard let element = Element.probeValue(probe, path: path, depth: depth) else { return nil }
        return recorded([element], probe, path)
    }
}

/// Unwraps optionals held in an `Any`.
enum ProbeOptional {
    /// The value inside any number of optionals, or `nil`.
    static func unwrap(_ value: Any) -> Any? {
        if let optional = value as? any OptionalUnwrapping { return optional.unwrappedAny.flatMap(unwrap) }
        return value
    }
}

/// An `Optional`, seen without its type.
protocol OptionalUnwrapping {
    /// The wrapped value, or `nil`.
    var unwrappedAny: Any? { get }
}

extension Optional: OptionalUnwrapping {
    var unwrappedAny: Any? { map { $0 as Any } }
}
