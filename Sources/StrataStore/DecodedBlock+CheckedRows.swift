internal import CStrataSupport
import Synchronization

/// The column offsets a block records for its rows once they are checked, read and written
/// without a lock: a scan reads them for every row, and a lock costs two atomic operations a
/// row.
///
/// The table is one allocation: the number of stored columns (an `Int`), then one `UInt16` a
/// stored column a row, all 0 until the row is recorded. It is allocated by the first row
/// recorded and published with a compare-and-exchange (a reader losing the race frees its own).
/// A row's entries are written before its first, which is written with release ordering and
/// read with acquire ordering; a row's first offset is never 0 (its null bitmap comes first),
/// which marks it checked. Two readers recording one row write the same values.
extension DecodedBlock {
    /// Copies the column offsets (`columns` `UInt16`s) recorded for the row in `slot` into
    /// `destination` and returns `true` when the row was checked before, else returns `false`.
    func copyCheckedOffsets(slot: Int, columns: Int, into destination: UnsafeMutableRawPointer) -> Bool {
        guard columns > 0, slot < rowCount, let table = offsetTable(columns: columns, creating: false) else {
            return false
        }
        let row = table + slot * columns
        guard strata_load_acquire_u16(row) != 0 else { return false }
        strata_load_relaxed_u16s(destination.assumingMemoryBound(to: UInt16.self), row, columns)
        return true
    }

    /// Records the column offsets (`columns` `UInt16`s at `source`) of the row in `slot`, just
    /// checked.
    func recordCheckedOffsets(slot: Int, columns: Int, from source: UnsafeRawPointer) {
        guard columns > 0, slot < rowCount, let table = offsetTable(columns: columns, creating: true) else { return }
        let row = table + slot * columns
        let offsets = source.assumingMemoryBound(to: UInt16.self)
        strata_store_relaxed_u16s(row + 1, offsets + 1, columns - 1)
        strata_store_release_u16(row, offsets[0])
    }

    /// Frees the table (the block's `deinit`).
    func releaseCheckedOffsets() {
        let address = checkedOffsets.load(ordering: .acquiring)
        if address != 0 { UnsafeMutableRawPointer(bitPattern: address)!.deallocate() }
    }

    /// The first row's entries of the table, when it is for rows of `columns` stored columns;
    /// allocated first when `creating`.
    private func offsetTable(columns: Int, creating: Bool) -> UnsafeMutablePointer<UInt16>? {
        var address = checkedOffsets.load(ordering: .acquiring)
        if address == 0 {
            guard creating else { return nil }
            let (entries, overflow) = columns.multipliedReportingOverflow(by: rowCount)
            guard !overflow else { return nil }
            let fresh = UnsafeMutableRawPointer.allocate(
                byteCount: MemoryLayout<Int>.size + 2 * entries, alignment: MemoryLayout<Int>.alignment)
            fresh.storeBytes(of: columns, as: Int.self)
            (fresh + MemoryLayout<Int>.size).initializeMemory(as: UInt16.self, repeating: 0, count: entries)
            let (exchanged, current) = checkedOffsets.compareExchange(
                expected: 0, desired: UInt(bitPattern: fresh), successOrdering: .acquiringAndReleasing,
                failureOrdering: .acquiring)
            if exchanged {
                address = UInt(bitPattern: fresh)
            } else {
                fresh.deallocate()
                address = current
            }
        }
        let base = UnsafeMutableRawPointer(bitPattern: address)!
        guard base.load(as: Int.self) == columns else { return nil }
        return (base + MemoryLayout<Int>.size).assumingMemoryBound(to: UInt16.self)
    }
}
