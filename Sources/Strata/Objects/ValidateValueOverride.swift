/// Whether a subclass of ``ManagedObject`` overrides `validateValue(_:forKey:)`, read from its
/// class metadata: when it does not, ``ManagedObject/validateProperties()`` may check a value
/// against the model directly instead of dispatching once per property with the key's string.
///
/// Swift keeps a class's vtable in its metadata, the inherited entries first, each at the same
/// offset in every subclass, and an override replaces its entry. The entry of
/// `validateValue(_:forKey:)` is found once by comparing the metadata of `ManagedObject` with
/// two private subclasses: one that overrides only that method and one that overrides nothing.
/// Exactly one word must differ in the first and match in the second; otherwise (a metadata
/// layout this code does not expect) every class counts as overriding and each value is
/// dispatched as before.
enum ValidateValueOverride {
    /// A subclass that overrides only `validateValue(_:forKey:)`.
    private final class Overriding: ManagedObject {
        override func validateValue(_ value: inout Any?, forKey key: String) throws {
            try super.validateValue(&value, forKey: key)
        }
    }

    /// A subclass that overrides nothing.
    private final class Plain: ManagedObject {}

    /// The byte offset of the entry from a class's metadata address point, and the entry of
    /// `ManagedObject` itself; `nil` when it cannot be told.
    private static let entry: (offset: Int, base: UInt)? = {
        let base = metadata(ManagedObject.self), overriding = metadata(Overriding.self), plain = metadata(Plain.self)
        let size = min(metadataSize(of: base), metadataSize(of: overriding), metadataSize(of: plain))
        let word = MemoryLayout<UInt>.size
        var found: [Int] = []
        // Past the kind and the superclass, which differ for reasons of their own.
        for offset in stride(from: 2 * word, to: size - word + 1, by: word) {
            let entry = base.load(fromByteOffset: offset, as: UInt.self)
            if overriding.load(fromByteOffset: offset, as: UInt.self) != entry,
                plain.load(fromByteOffset: offset, as: UInt.self) == entry
            {
                found.append(offset)
            }
        }
        guard found.count == 1 else { return nil }
        return (found[0], base.load(fromByteOffset: found[0], as: UInt.self))
    }()

    /// Whether objects of `type` may run code of their own in `validateValue(_:forKey:)`: `true`
    /// when the class or a superclass below `ManagedObject` overrides it, or when that cannot be
    /// told. A few loads, no lock.
    static func isOverridden(in type: ManagedObject.Type) -> Bool {
        guard let entry else { return true }
        return metadata(type).load(fromByteOffset: entry.offset, as: UInt.self) != entry.base
    }

    /// The class metadata's address point.
    private static func metadata(_ type: ManagedObject.Type) -> UnsafeRawPointer {
        unsafeBitCast(type, to: UnsafeRawPointer.self)
    }

    /// The bytes of class metadata from its address point on: its class size less its address
    /// point (`ClassSize` and `ClassAddressPoint`, the 32-bit fields at 32 and 36 bytes on 64-bit
    /// platforms without Objective-C interoperability); 0 when they make no sense.
    private static func metadataSize(of metadata: UnsafeRawPointer) -> Int {
        #if _runtime(_ObjC)
        return 0
        #else
        guard MemoryLayout<UInt>.size == 8 else { return 0 }
        let classSize = Int(metadata.load(fromByteOffset: 32, as: UInt32.self))
        let addressPoint = Int(metadata.load(fromByteOffset: 36, as: UInt32.self))
        guard addressPoint < classSize, classSize - addressPoint <= 1 << 16 else { return 0 }
        return classSize - addressPoint
        #endif
    }
}
