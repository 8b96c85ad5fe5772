/// The name of a numbered file of a store (a segment, a checkpoint): `id` in at least eight
/// decimal digits, zero-padded, then `suffix` (what `String(format: "%08u")` writes, without
/// Foundation's formatter: an open names every segment of the store).
func numberedFileName(_ id: UInt32, suffix: String) -> String {
    let digits = String(id)
    return String(repeating: "0", count: max(0, 8 - digits.count)) + digits + suffix
}
