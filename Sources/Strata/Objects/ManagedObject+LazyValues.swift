import Foundation

/// A stored row an object holds instead of its decoded values: a slot is decoded from it when
/// it is read (``ManagedObject/slotValue(_:)``), so columns never read are never turned into
/// `Any` values, and an object only read holds its row and nothing more.
struct LazyRow {
    /// The row (for an engine store, its encoded bytes).
    var row: StoredRow
    /// How the row's columns map to the object's slots.
    var layout: EntityLayout
    /// Which of the slots below ``trackedSlots`` are decoded into ``ManagedObject/slots``, one
    /// bit each. One word, not a ``SlotSet`` (two), so that the object fits glibc's 160-byte
    /// heap block with a row that is a place in a shared block (``EncodedRowArena``).
    var decoded: UInt64 = 0
    /// The IDs of the to-one references the fetch that loaded the row made, shared with the
    /// other objects it loaded.
    var references: ReferenceIDs?

    /// The slots ``decoded`` tracks. A slot past them whose value is kept once decoded
    /// (``RowDecoding/keepsDecodedValue(_:)``) is decoded when the row is loaded
    /// (``EntityRuntime/eagerSlots``); the others past them are decoded on every read.
    static let trackedSlots = 64

    /// The bit of `slot` (one of ``trackedSlots``) in ``decoded``.
    static func bit(_ slot: Int) -> UInt64 {
        1 << UInt64(slot)
    }

    /// Whether `slot`, loaded as `load`, holds its decoded value in the object's slots.
    func isDecoded(_ slot: Int, load: SlotLoad) -> Bool {
        slot < Self.trackedSlots ? decoded & Self.bit(slot) != 0 : RowDecoding.keepsDecodedValue(load)
    }
}

extension ManagedObject {
    /// Takes `row` as the object's values and committed values, decoding now only the slots
    /// ``RowDecoding/decodesEagerly(_:)`` names; the others are decoded on first access.
    ///
    /// - Throws: what decoding an eager slot throws (the object is left as it was).
    func loadLazily(
        from row: consuming StoredRow, layout: EntityLayout, context: ManagedObjectContext, references: ReferenceIDs?
    ) throws {
        var eager: [Any?] = []
        var decoded: UInt64 = 0
        if !runtime.eagerSlots.isEmpty {
            (eager, decoded) = try eagerValues(of: row, layout: layout, context: context, references: references)
        }
        lazyRow = nil
        slots = eager
        committedSlots = nil
        lazyRow = LazyRow(row: row, layout: layout, decoded: decoded, references: references)
    }

    /// The values of the ``EntityRuntime/eagerSlots``, decoded from `row`, by slot, and the
    /// ``LazyRow/decoded`` bits of those among ``LazyRow/trackedSlots``. Not inlined in ``loadLazily(from:layout:context:references:)``,
    /// whose objects mostly have none: the decoding's references would be retained for every
    /// object.
    @inline(never)
    private func eagerValues(
        of row: borrowing StoredRow, layout: EntityLayout, context: ManagedObjectContext, references: ReferenceIDs?
    ) throws -> ([Any?], UInt64) {
        var eager = [Any?](repeating: nil, count: runtime.loads.count)
        var decoded: UInt64 = 0
        for slot in runtime.eagerSlots {
            eager[slot] = try RowDecoding.value(
                slot, of: runtime, from: row, layout: layout, storeIdentifier: objectID.storeIdentifier,
                context: context, references: references)
            if slot < LazyRow.trackedSlots { decoded |= LazyRow.bit(slot) }
        }
        return (eager, decoded)
    }

    /// The value in `slot`, decoding only that slot when the object holds a lazily loaded row.
    @inline(__always)
    func slotValue(_ slot: Int) throws -> Any? {
        guard lazyRow != nil else { return slots[slot] }
        return try decodeLazySlot(slot)
    }

    /// The value of `slot` from ``lazyRow`` (the decoded one, if it was). Attribute values are
    /// decoded from the row on every read and not kept (the row holds them, and an object read
    /// once costs no slot storage); a to-one reference's ID is made once and kept.
    private func decodeLazySlot(_ slot: Int) throws -> Any? {
        guard let lazy = lazyRow else { return slots[slot] }
        let load = runtime.loads[slot]
        if lazy.isDecoded(slot, load: load) { return slots[slot] }
        guard load == .toOne || load == .toOneOfHierarchy else {
            // An attribute: no store identifier or context to read.
            return RowDecoding.plainValue(
                slot, load: load, of: runtime, from: lazy.row, layout: lazy.layout, storeIdentifier: nil, context: nil)
        }
        let value = RowDecoding.plainValue(
            slot, load: load, of: runtime, from: lazy.row, layout: lazy.layout,
            storeIdentifier: objectID.storeIdentifier, context: managedObjectContext, references: lazy.references)
        guard load == .toOne else { return value }
        if slots.isEmpty { slots = Array(repeating: nil, count: runtime.loads.count) }
        slots[slot] = value
        lazyRow!.decoded |= LazyRow.bit(slot)
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
        for slot in loads.indices where !lazy.isDecoded(slot, load: loads[slot]) {
            slots[slot] = RowDecoding.plainValue(
                slot, load: loads[slot], of: runtime, from: lazy.row, layout: lazy.layout,
                storeIdentifier: storeIdentifier, context: context,
                references: lazy.references)
        }
        committedSlots = slots
    }
}
