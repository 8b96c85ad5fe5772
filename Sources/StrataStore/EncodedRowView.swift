/// A stored row read in place, where its block holds it, while a reader decides whether to copy
/// it as an ``EncodedRow``: what ``Store/scanEncoded(_:where:_:)`` and its kin pass to their
/// `accept` closure, so that rows a filter rejects are never copied.
///
/// Valid only inside the call that passes it: it points into a block the store may free after.
/// The row was checked as an ``EncodedRow``'s is, so that reading a value never fails.
public struct EncodedRowView {
    /// The row's bytes in its block.
    let bytes: UnsafeRawBufferPointer
    /// The row's column offsets, as an ``EncodedRow`` keeps them (`nil` for a row of more than
    /// 64 KiB).
    let offsets: UnsafeRawPointer?
    /// The codec the row was written with, held by the store's formats while the view is valid
    /// (borrowed, not retained: an atomic operation a read).
    let codec: Unmanaged<RowCodec>

    /// The value of the column at `column`, decoded from the row's bytes.
    public func value(_ column: Int) -> Value {
        codec._withUnsafeGuaranteedRef { $0.checkedValue(column, of: bytes, offsets: offsets) }
    }
}
