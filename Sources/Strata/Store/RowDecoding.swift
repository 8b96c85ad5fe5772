import Foundation
import OrderedCollections
internal import StrataStore

/// Turns stored rows into object values: the store layer's one decoder of stored values, for
/// objects loaded slot by slot and for the values read by property (history, point-in-time
/// values, rows tested against a predicate, migration checks and conversions).
///
/// A slot's value comes from its column (``EntityLayout/slotColumns``) by the slot's precomputed
/// ``EntityRuntime/loads``, so that decoding counts no references to the model's descriptions
/// but for the destinations of to-one references. A value read by property goes through
/// ``value(_:for:storeIdentifier:coordinator:)``, or ``attributeValue(_:for:coordinator:)`` and
/// ``toOneValue(_:destination:storeIdentifier:)`` when the kind of property is known.
enum RowDecoding {
    /// The object values of every slot of `runtime` from `row`.
    ///
    /// - Parameters:
    ///   - context: the context whose registered objects give references to sub-entities their
    ///     concrete entity.
    ///   - references: the IDs of referenced objects already made by the fetch loading the row.
    static func values(
        of runtime: EntityRuntime, from row: Row, layout: EntityLayout, storeIdentifier: String?,
        context: ManagedObjectContext?, references: ReferenceIDs? = nil
    ) throws -> [Any?] {
        let row = StoredRow.decoded(row)
        let count = runtime.loads.count
        var values: [Any?] = []
        values.reserveCapacity(count)
        for slot in 0..<count {
            values.append(
                try value(
                    slot, of: runtime, from: row, layout: layout, storeIdentifier: storeIdentifier, context: context,
                    references: references))
        }
        return values
    }

    /// The object value of `slot` from `row`.
    ///
    /// - Throws: only for ``SlotLoad/converted`` slots (``decodesEagerly(_:)``), what
    ///   ``attributeValue(_:for:coordinator:)`` throws.
    @inline(__always)
    static func value(
        _ slot: Int, of runtime: EntityRuntime, from row: StoredRow, layout: EntityLayout, storeIdentifier: String?,
        context: ManagedObjectContext?, references: ReferenceIDs? = nil
    ) throws -> Any? {
        let load = runtime.loads[slot]
        guard load == .converted else {
            return plainValue(
                slot, load: load, of: runtime, from: row, layout: layout, storeIdentifier: storeIdentifier,
                context: context, references: references)
        }
        let column = layout.slotColumns[slot]
        guard column >= 0, case .attribute(let attribute) = runtime.kinds[slot] else { return nil }
        return try attributeValue(row[column], for: attribute, coordinator: context?.persistentStoreCoordinator)
    }

    /// The object value of the stored value `stored` of `property` of an object of the store
    /// `storeIdentifier`: an attribute's value (``attributeValue(_:for:coordinator:)``), a to-one
    /// relationship's related object (``toOneValue(_:destination:storeIdentifier:)``); `nil` for
    /// `null` and for other properties.
    ///
    /// - Throws: what ``attributeValue(_:for:coordinator:)`` throws.
    static func value(
        _ stored: Value, for property: PropertyDescription, storeIdentifier: String?,
        coordinator: PersistentStoreCoordinator?
    ) throws -> Any? {
        if let attribute = property as? AttributeDescription {
            return try attributeValue(stored, for: attribute, coordinator: coordinator)
        }
        guard let relationship = property as? RelationshipDescription, !relationship.isToMany,
            let destination = relationship.destinationEntity, let storeIdentifier
        else { return nil }
        return toOneValue(stored, destination: destination, storeIdentifier: storeIdentifier)
    }

    /// The object value of an attribute's stored value: integers of 16 and 32 bits narrowed,
    /// object IDs looked up by their URI through `coordinator`, transformable and composite
    /// values decoded, any other value's payload as it is; `nil` for `null`.
    ///
    /// - Throws: what the attribute's value transformer or composite decoding throws.
    static func attributeValue(
        _ stored: Value, for attribute: AttributeDescription, coordinator: PersistentStoreCoordinator?
    ) throws -> Any? {
        switch stored {
        case .int(let v):
            switch attribute.attributeType {
            case .integer16AttributeType: return Int16(truncatingIfNeeded: v)
            case .integer32AttributeType: return Int32(truncatingIfNeeded: v)
            default: return v
            }
        case .uri(let v) where attribute.attributeType == .objectIDAttributeType:
            return coordinator?.managedObjectID(forURIRepresentation: v)
        case .data(let v) where attribute.attributeType == .transformableAttributeType:
            return try ValueTransformers.decode(v, for: attribute)
        case .data(let v) where attribute is CompositeAttributeDescription:
            return try CompositeValues.decode(v, for: attribute as! CompositeAttributeDescription)
        default:
            return ValueConversion.plainValue(stored)
        }
    }

    /// The ID of the object a to-one relationship's stored value names: of the relationship's
    /// declared `destination`, in the store `storeIdentifier`; `nil` when it names none.
    static func toOneValue(_ stored: Value, destination: EntityDescription, storeIdentifier: String) -> ManagedObjectID?
    {
        guard case .reference(let key) = stored else { return nil }
        return ManagedObjectID(entity: destination, storeIdentifier: storeIdentifier, primaryKey: key)
    }

    /// The object value of a slot whose load is not ``SlotLoad/converted``: cannot fail.
    @inline(__always)
    static func plainValue(
        _ slot: Int, load: SlotLoad, of runtime: EntityRuntime, from row: StoredRow, layout: EntityLayout,
        storeIdentifier: String?,
        context: ManagedObjectContext?, references: ReferenceIDs? = nil
    ) -> Any? {
        let column = layout.slotColumns[slot]
        guard column >= 0 else { return nil }
        let stored = row[column]
        switch load {
        case .plain:
            return ValueConversion.plainValue(stored)
        case .integer16:
            if case .int(let value) = stored { return Int16(truncatingIfNeeded: value) }
            return ValueConversion.plainValue(stored)
        case .integer32:
            if case .int(let value) = stored { return Int32(truncatingIfNeeded: value) }
            return ValueConversion.plainValue(stored)
        case .toOne, .toOneOfHierarchy:
            guard case .reference(let key) = stored, let destination = runtime.toOneDestinations[slot],
                let storeIdentifier
            else { return nil }
            if load == .toOne, let references {
                return references.id(destination: destination, storeIdentifier: storeIdentifier, key: key)
            }
            let id = ManagedObjectID(entity: destination, storeIdentifier: storeIdentifier, primaryKey: key)
            guard load == .toOneOfHierarchy, let context else { return id }
            return context.resolvedID(id)
        case .converted, .none:
            return nil
        }
    }

    /// Whether a slot loaded this way is decoded when its row is loaded rather than on first
    /// access: conversions can fail (the load reports it), and a reference to a sub-entity takes
    /// its concrete entity from the context's registered objects as they are at the load.
    static func decodesEagerly(_ load: SlotLoad) -> Bool {
        load == .converted || load == .toOneOfHierarchy
    }

    /// Whether an object loaded lazily keeps a slot's value once decoded (in its slots, instead
    /// of decoding it from the row on every read): those decoded eagerly, and a to-one
    /// reference's ID, made once.
    static func keepsDecodedValue(_ load: SlotLoad) -> Bool {
        decodesEagerly(load) || load == .toOne
    }
}

/// The IDs of the objects the to-one references of one fetch's rows name, made once and shared
/// by the objects naming the same object (a thousand employees of one department hold one ID).
///
/// A direct-mapped table by primary key, with no hashing and no growth: a reference whose entry
/// holds another ID gets a new ID, which takes the entry.
final class ReferenceIDs {
    /// The IDs made so far, at their key's position (`key & mask`); empty until the first use.
    private var ids: [ManagedObjectID?] = []
    /// The positions of ``ids`` minus one.
    private static let mask = 255

    /// The ID of the object of `destination` with `key` in the store `storeIdentifier`.
    func id(destination: EntityDescription, storeIdentifier: String, key: PrimaryKey) -> ManagedObjectID {
        if ids.isEmpty { ids = Array(repeating: nil, count: Self.mask + 1) }
        let position = Int(truncatingIfNeeded: key) & Self.mask
        if let known = ids[position], known.primaryKey == key, known.entity === destination,
            known.storeIdentifier == storeIdentifier
        {
            return known
        }
        let id = ManagedObjectID(entity: destination, storeIdentifier: storeIdentifier, primaryKey: key)
        ids[position] = id
        return id
    }
}
