import Foundation

/// Core Data's version hashes, byte for byte: what `NSPropertyDescription.versionHash`,
/// `NSEntityDescription.versionHash`, `NSManagedObjectModel.versionChecksum` and a store's
/// `NSStoreModelVersionHashesDigest` are, so that Strata's equal Xcode's and Core Data's for the
/// same model (a compiled mapping model and a staged migration's model references name models
/// by them).
///
/// Integers are little-endian, strings their UTF-8 bytes with no length or terminator, and
/// "name order" is `NSString`'s `compare:` (UTF-16 code units).
enum CoreDataVersionHash {
    /// A property's hash: for every kind, SHA-256 of the name, a 16-bit flag word (optional 1,
    /// transient 2, read-only 4) and the version hash modifier; an attribute hashes that with its
    /// 32-bit type and a byte for external storage and one for history tombstones; a
    /// relationship with its destination's name, its inverse's name, its maximum and minimum
    /// counts (32-bit) and, when ordered, `01 00`; a composite attribute is the hash of its
    /// elements' hashes, flattened, in name order.
    static func of(_ property: PropertyDescription) -> [UInt8] {
        if let composite = property as? CompositeAttributeDescription {
            let elements = flattened(composite.elements).filter { !$0.isTransient }.sorted(by: nameOrder)
            return SHA2.sha256(elements.flatMap(of))
        }
        var prefix = Array(property.name.utf8)
        let flags = UInt16(property.isOptional ? 1 : 0) | UInt16(property.isTransient ? 2 : 0)
        prefix += littleEndian(flags)
        if let modifier = property.versionHashModifier { prefix += Array(modifier.utf8) }
        let base = SHA2.sha256(prefix)
        if let attribute = property as? AttributeDescription {
            var bytes = base + littleEndian(Int32(truncatingIfNeeded: Int(attribute.attributeType.rawValue)))
            if attribute.allowsExternalBinaryDataStorage { bytes.append(1) }
            if attribute.preservesValueInHistoryOnDeletion { bytes.append(1) }
            return SHA2.sha256(bytes)
        }
        if let relationship = property as? RelationshipDescription {
            var bytes = base + Array((relationship.destinationEntity?.entityName ?? "").utf8)
            if let inverse = relationship.inverseRelationship, inverse !== relationship {
                bytes += Array(inverse.name.utf8)
            }
            bytes += littleEndian(UInt32(truncatingIfNeeded: relationship.maxCount))
            bytes += littleEndian(UInt32(truncatingIfNeeded: relationship.minCount))
            if relationship.isOrdered { bytes += [1, 0] }
            return SHA2.sha256(bytes)
        }
        return base
    }

    /// An entity's hash: SHA-256 of its name, a byte for abstractness, its superentity's hash,
    /// the hashes of its stored attributes and relationships (inherited ones included) in name
    /// order, its version hash modifier and its uniqueness constraints (each joined with `.`,
    /// in order, empty ones left out).
    static func of(_ entity: EntityDescription) -> [UInt8] {
        var bytes = Array(entity.entityName.utf8) + [entity.isAbstract ? 1 : 0]
        if let superentity = entity.superentity { bytes += [UInt8](superentity.versionHash) }
        let stored = entity.computeProperties().filter { !$0.isTransient && !($0 is FetchedPropertyDescription) }
        for property in stored.sorted(by: nameOrder) { bytes += of(property) }
        if let modifier = entity.versionHashModifier { bytes += Array(modifier.utf8) }
        let constraints = entity.uniquenessConstraints.map {
            $0.map(EntityDescription.constraintElementName).joined(separator: ".")
        }
        for constraint in constraints.sorted(by: { $0.utf16.lexicographicallyPrecedes($1.utf16) })
        where !constraint.isEmpty {
            bytes += Array(constraint.utf8)
        }
        return SHA2.sha256(bytes)
    }

    /// A model's version checksum: the Base64 text of SHA-256 of its entities' hashes in entity
    /// name order.
    static func checksum(of hashes: [String: Data]) -> String {
        Data(SHA2.sha256(sorted(hashes).flatMap { [UInt8]($0.value) })).base64EncodedString()
    }

    /// A store's version hashes digest: the Base64 text of SHA-512 of each entity's name and
    /// hash, in entity name order.
    static func digest(of hashes: [String: Data]) -> String {
        Data(SHA2.sha512(sorted(hashes).flatMap { Array($0.key.utf8) + [UInt8]($0.value) })).base64EncodedString()
    }

    private static func sorted(_ hashes: [String: Data]) -> [(key: String, value: Data)] {
        hashes.sorted { $0.key.utf16.lexicographicallyPrecedes($1.key.utf16) }
    }

    private static func nameOrder(_ a: PropertyDescription, _ b: PropertyDescription) -> Bool {
        a.name.utf16.lexicographicallyPrecedes(b.name.utf16)
    }

    /// The attributes of `elements`, a nested composite's own elements in its place.
    private static func flattened(_ elements: [AttributeDescription]) -> [AttributeDescription] {
        elements.flatMap { ($0 as? CompositeAttributeDescription).map { flattened($0.elements) } ?? [$0] }
    }

    private static func littleEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        withUnsafeBytes(of: value.littleEndian, Array.init)
    }
}
