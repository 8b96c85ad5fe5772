extension String {
    /// The keys of this dotted key path (`department.name`: `department`, `name`), empty ones
    /// left out. A path of one key, the common case, is not split: splitting it cost ~2,800
    /// instructions (callgrind, planning W5's fetch, which validates two such paths).
    var dottedKeys: [String] {
        guard containsASCII(".") else { return isEmpty ? [] : [self] }
        return split(separator: ".").map(String.init)
    }
}
