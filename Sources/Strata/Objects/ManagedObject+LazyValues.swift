import Foundation
import StrataStore

/// A stored row an object holds instead of its decoded values: a slot is decoded from it when
/// it is read (``ManagedObject/slotValue(_:)``), so columns never read are never turned into
/// `Any` values, and an object only read holds its row and nothing more.
struct LazyRow {
    /// The row (for an engine store, its encoded bytes).
    var row: StoredRow
    /// How the row's columns map to the object's slots.
    var layout: EntityLayout
    /// The slots already decoded into ``ManagedObject/slots``.
    var decoded = SlotSet()
    /// The IDs of the to-one references the fetch that loaded the row made, shared with the
    /// other objects it loaded.
    var references: ReferenceIDs?
}

extension ManagedObject {
    /// Takes `row` as the object's values and committed values, decoding now only the slots
    /// ``RowDecoding/decodesEagerly(_:)`` names; the others are decoded on first access.
    ///
    /// - Throws: what decoding an eager slot throws (the object is left as it was).
    func loadLazily(from row: consuming StoredRow, layout: EntityLayout, context: ManagedObjectContext, references: ReferenceIDs?) throws {
        var eager: [Any?] = []
        var decoded = SlotSet()
        if !runtime.eagerSlots.isEmpty {
            (eager, decoded) = try eagerValues(of: row, layout: layout, context: context, references: references)
        }
        lazyRow = nil
        slots = eager
        committedSlots = nil
        lazyRow = LazyRow(row: row, layout: layout, decoded: decoded, references: references)
    }

    /// The values of the slots ``RowDecoding/decodesEagerly(_:)`` names, decoded from `row`, by
    /// slot, and the set of those slots. Not inlined in ``loadLazily(from:layout:context:references:)``,
    /// whose objects mostly have none: the decoding's references would be retained for every
    /// object.
    @inline(never)
    private func eagerValues(
        of row: borrowing StoredRow, layout: EntityLayout, context: ManagedObjectContext, references: ReferenceIDs?
    ) throws -> ([Any?], SlotSet) {
        var eager = [Any?](repeating: nil, count: runtime.loads.count)
        var decoded = SlotSet()
        for slot in runtime.eagerSlots {
            eager[slot] = try RowDecoding.value(
                slot, of: runtime, from: row, layout: layout, storeIdentifier: objectID.storeIdentifier, context: context, references: references)
            decoded.insert(slot)
        }
        return (eager, decoded)
    }

    /// The value in `slot`, decoding only that slot when the object holds a lazily loaded row.
    @inline(__always)
    func slotValue(_ slot: Int) throws -> Any? {
        guard lazyRow != nil else { return slots[slot] }
        return try decodeLazySlot(slot)
    }

    /// The stored value of the plain attribute in `slot` from ``lazyRow``, when the object
    /// holds a row that has not decoded the slot (else `nil`): what ``decodeLazySlot(_:)``
    /// would return, before it is made an `Any`.
    func lazyPlainValue(_ slot: Int) -> StrataStore.Value? {
        guard lazyRow != nil, runtime.loads[slot] == .plain else { return nil }
        // Read in place: a copy of the row out of the object would retain and release its four
        // references, twice as many atomic operations as the rest of a read.
        return Self.plainValue(slot, of: &lazyRow!)
    }

    /// The stored value of `slot` from `lazy`, unless the slot was decoded.
    private static func plainValue(_ slot: Int, of lazy: inout LazyRow) -> StrataStore.Value? {
        guard !lazy.decoded.contains(slot) else { return nil }
        let column = lazy.layout.slotColumns[slot]
        return column >= 0 ? lazy.row[column] : nil
    }

    /// The value of `slot` from ``lazyRow`` (the decoded one, if it was). Attribute values are
    /// decoded from the row on every read and not kept (the row holds them, and an object read
    /// once costs no slot storage); a to-one reference's ID is made once and kept.
    private func decodeLazySlot(_ slot: Int) throws -> Any? {
        guard let lazy = lazyRow else { return slots[slot] }
        if lazy.decoded.contains(slot) { return slots[slot] }
        let load = runtime.loads[slot]
        guard load == .toOne || load == .toOneOfHierarchy else {
            // An attribute: no store identifier or context to read.
            return RowDecoding.plainValue(slot, load: load, of: runtime, from: lazy.row, layout: lazy.layout, storeIdentifier: nil, context: nil)
        }
        let value = RowDecoding.plainValue(
            slot, load: load, of: runtime, from: lazy.row, layout: lazy.layout,
            storeIdentifier: objectID.storeIdentifier, context: managedObjectContext, references: lazy.references)
        guard load == .toOne else { return value }
        if slots.isEmpty { slots = Array(repeating: nil, count: runtime.loads.count) }
        slots[slot] = value
        lazyRow!.decoded.insert(slot)
        return value
    }

    /// Decodes every slot of ``lazyRow`` not decoded yet, makes the values the committed values
    /// and drops the row.
    func decodeLazyRow() {
        guard let lazy = lazyRow else { return }
        lazyRow = nil
        let loads = runtime.loads
        if slots.isEmpty { slots = Array(repeating: nil, count: loads.count) }
        let context = managedObjectContext
        let storeIdentifier = objectID.storeIdentifier
        for slot in loads.indices where !lazy.decoded.contains(slot) {
            slots[slot] = RowDecoding.plainValue(
                slot, load: loads[slot], of: runtime, from: lazy.row, layout: lazy.layout, storeIdentifier: storeIdentifier, context: context,
                references: lazy.references)
        }
        committedSlots = slots
    }
}
