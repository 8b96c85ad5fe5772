/// One (value, primary key) pair of a fetch index as its sorted chunks hold it
/// (``SortedIndexEntries``), in one of the representations ``OrderedIndex`` chooses between.
protocol OrderedIndexEntry: Sendable {
    /// Whether the pair (`value`, `key`) has this representation.
    static func fits(_ value: Value, key: PrimaryKey) -> Bool

    /// The entry of the pair (`value`, `key`), which ``fits(_:key:)``.
    init(fitting value: Value, key: PrimaryKey)

    /// The column value.
    var value: Value { get }
    /// The primary key of the row holding ``value``.
    var key: PrimaryKey { get }

    /// Whether this entry sorts before `other`: by value (as `Value`'s `<` orders them), then by key.
    func precedes(_ other: Self) -> Bool
}

/// An entry of any value: 32 bytes (a `Value` and a key).
struct GeneralIndexEntry: OrderedIndexEntry {
    let value: Value
    let key: PrimaryKey

    static func fits(_ value: Value, key: PrimaryKey) -> Bool { true }

    init(fitting value: Value, key: PrimaryKey) {
        self.value = value
        self.key = key
    }

    func precedes(_ other: GeneralIndexEntry) -> Bool {
        // Integer and to-one reference columns and nulls (a reference column of objects related
        // to none) compare without `Value`'s general comparison.
        switch (value, other.value) {
        case (.int(let mine), .int(let theirs)), (.reference(let mine), .reference(let theirs)):
            return mine != theirs ? mine < theirs : key < other.key
        case (.null, .null):
            return key < other.key
        default:
            break
        }
        if value < other.value { return true }
        if other.value < value { return false }
        return key < other.key
    }
}

/// The one kind of 64-bit value a ``PackedIndexEntry`` holds besides null.
protocol PackedIndexKind: Sendable {
    /// The value's bits when it is of this kind (ordered as `Int64`s as the values are ordered).
    static func bits(of value: Value) -> Int64?
    /// The value of `bits`.
    static func value(_ bits: Int64) -> Value
}

/// `Value.int`: integer columns, the most common indexed ones.
enum IntIndexKind: PackedIndexKind {
    static func bits(of value: Value) -> Int64? {
        if case .int(let number) = value { return number }
        return nil
    }

    static func value(_ bits: Int64) -> Value { .int(bits) }
}

/// `Value.reference`: to-one relationships.
enum ReferenceIndexKind: PackedIndexKind {
    static func bits(of value: Value) -> Int64? {
        if case .reference(let key) = value { return key }
        return nil
    }

    static func value(_ bits: Int64) -> Value { .reference(bits) }
}

/// An entry of a null or a value of one 64-bit kind, and a non-negative key: 16 bytes, half a
/// ``GeneralIndexEntry``. Nulls sort first (as `Value`'s `<` puts them), by key; then values by
/// their bits, then key.
struct PackedIndexEntry<Kind: PackedIndexKind>: OrderedIndexEntry {
    /// The value's bits; 0 for null.
    private let bits: Int64
    /// The key, with the top bit set when the value is not null.
    private let word: UInt64

    /// The bit of ``word`` set for a value that is not null.
    private static var present: UInt64 { 1 << 63 }

    static func fits(_ value: Value, key: PrimaryKey) -> Bool {
        key >= 0 && (value.isNull || Kind.bits(of: value) != nil)
    }

    init(fitting value: Value, key: PrimaryKey) {
        if let bits = Kind.bits(of: value) {
            self.bits = bits
            word = UInt64(key) | Self.present
        } else {
            bits = 0
            word = UInt64(key)
        }
    }

    var value: Value { word & Self.present == 0 ? .null : Kind.value(bits) }

    var key: PrimaryKey { PrimaryKey(word & ~Self.present) }

    func precedes(_ other: PackedIndexEntry) -> Bool {
        let (mine, theirs) = (word & Self.present, other.word & Self.present)
        if mine != theirs { return mine < theirs }
        return bits != other.bits ? bits < other.bits : word < other.word
    }
}
