extension DecodedBlock {
    /// Copies the column offsets (`columns` `UInt16`s) recorded for the row in `slot` into
    /// `destination` and returns `true` when the row was checked before, else returns `false`.
    func copyCheckedOffsets(slot: Int, columns: Int, into destination: UnsafeMutableRawPointer) -> Bool {
        checkedOffsets.withLock { offsets in
            let start = slot * columns
            guard columns > 0, start + columns <= offsets.count, offsets[start] != 0 else { return false }
            offsets.withUnsafeBytes { destination.copyMemory(from: $0.baseAddress! + 2 * start, byteCount: 2 * columns) }
            return true
        }
    }

    /// Records the column offsets (`columns` `UInt16`s at `source`) of the row in `slot`, just
    /// checked. A row's first offset is never 0 (its null bitmap comes first), which marks it
    /// checked.
    func recordCheckedOffsets(slot: Int, columns: Int, from source: UnsafeRawPointer) {
        guard columns > 0, slot < rowCount else { return }
        checkedOffsets.withLock { offsets in
            if offsets.isEmpty { offsets = [UInt16](repeating: 0, count: rowCount * columns) }
            guard offsets.count == rowCount * columns else { return }
            offsets.withUnsafeMutableBytes { $0.baseAddress!.advanced(by: 2 * slot * columns).copyMemory(from: source, byteCount: 2 * columns) }
        }
    }
}
