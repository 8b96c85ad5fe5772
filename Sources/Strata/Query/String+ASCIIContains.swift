extension String {
    /// Whether the text holds the ASCII character `character` (the `.` and `@` of key paths),
    /// compared byte by byte: Foundation's `contains(_:)`, which `"a.b".contains(".")` calls,
    /// costs about 2,000 instructions, and fetch planning asks this for every key it plans.
    func containsASCII(_ character: Unicode.Scalar) -> Bool {
        utf8.contains(UInt8(ascii: character))
    }
}
