import Foundation
import OrderedCollections
internal import StrataStore

/// Turns a stored row into object values, slot by slot (the store layer's decoding).
///
/// A slot's value comes from its column (``EntityLayout/slotColumns``) by the slot's precomputed
/// ``EntityRuntime/loads``, so that decoding counts no references to the model's descriptions
/// but for the destinations of to-one references.
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
    ///   ``ValueConversion/objectValue(_:for:coordinator:)`` throws.
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
        return try ValueConversion.objectValue(
            row[column], for: attribute, coordinator: context?.persistentStoreCoordinator)
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
