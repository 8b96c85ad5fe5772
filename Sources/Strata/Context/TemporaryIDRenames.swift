/// The permanent IDs obtained for temporary IDs (by a save, or a context's own
/// ``ManagedObjectContext/obtainPermanentIDs(for:)``), looked up by temporary ID.
///
/// Temporary identifiers come from one counter of the process, so the objects a context
/// inserts in a row have consecutive ones: when the renamed identifiers are that dense (their
/// range at most about twice their number), the permanent IDs are kept in an array indexed by
/// identifier, and a lookup is one read rather than hashing and probing a dictionary of every
/// renamed ID (100,000 lookups for a bulk insert of employees in departments: each employee's
/// department, and each department's employees). Otherwise they are kept in a dictionary.
struct TemporaryIDRenames {
    /// Every temporary ID with its permanent ID.
    let pairs: [(temporary: ManagedObjectID, permanent: ManagedObjectID)]
    /// The smallest temporary identifier of ``dense``.
    private var first: UInt64 = 0
    /// The permanent ID by temporary identifier minus ``first`` (`nil` where none was renamed),
    /// when the identifiers are dense; else empty.
    private var dense: [ManagedObjectID?] = []
    /// The permanent ID by temporary ID when the identifiers are not dense; else empty.
    private var sparse: [ManagedObjectID: ManagedObjectID] = [:]

    /// The renames of `pairs`, each temporary ID once.
    init(_ pairs: [(temporary: ManagedObjectID, permanent: ManagedObjectID)]) {
        self.pairs = pairs
        let identifiers = pairs.lazy.compactMap(\.temporary.temporaryIdentifier)
        if let low = identifiers.min(), let high = identifiers.max(), identifiers.count == pairs.count,
            high - low < 2 * UInt64(pairs.count) + 64
        {
            first = low
            dense = [ManagedObjectID?](repeating: nil, count: Int(high - low) + 1)
            for (temporary, permanent) in pairs { dense[Int(temporary.temporaryIdentifier! - low)] = permanent }
        } else {
            sparse.reserveCapacity(pairs.count)
            for (temporary, permanent) in pairs { sparse[temporary] = permanent }
        }
    }

    /// The renames of `dictionary`.
    init(_ dictionary: [ManagedObjectID: ManagedObjectID]) {
        self.init(dictionary.map { (temporary: $0.key, permanent: $0.value) })
    }

    /// Whether nothing was renamed.
    var isEmpty: Bool { pairs.isEmpty }

    /// The permanent ID of `id`, if it is a renamed temporary ID.
    subscript(id: ManagedObjectID) -> ManagedObjectID? {
        guard !sparse.isEmpty else {
            guard let identifier = id.temporaryIdentifier, identifier >= first, identifier - first < UInt64(dense.count)
            else { return nil }
            return dense[Int(identifier - first)]
        }
        return sparse[id]
    }
}
