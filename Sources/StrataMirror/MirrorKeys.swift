import Logging
import PostgresNIO
import Strata
import StrataStore
import StrataSynchronization
import Synchronization

/// The primary keys a mirrored store hands out, unique across the instances sharing the
/// dataset (the engine's ``KeySource``).
///
/// - Synchronous mode: a save holds the log's head lock, has applied every earlier save and
///   allocates after every key it applied, as an unmirrored store does; it also stays above
///   `strata_keys` (the ranges leased to asynchronous instances) and raises it past what it inserts.
/// - Asynchronous mode: two instances insert without seeing each other, so each allocates only
///   from ranges of keys leased to it in `strata_keys` (``MirrorConfiguration/keyBlockSize`` at a
///   time, recorded in the store with the saves that use them). A save that needs more keys than
///   are left leases them at once; with PostgreSQL unreachable it uses the reserve, and fails
///   with ``CoreDataError/Code/persistentStoreSave`` once the reserve is used up.
final class MirrorKeys: KeySource, Sendable {
    private struct State {
        /// Synchronous mode: the first key of each entity no asynchronous instance holds.
        var floors: [Int: Int64] = [:]
        /// Asynchronous mode: the unused leased keys of each entity.
        var ranges: [Int: [ClosedRange<Int64>]] = [:]
        /// Whether `ranges` changed since the store last recorded them.
        var changed = false
        /// An entity a save found no keys for.
        var exhausted: Int?
    }

    private let state = Lock(State())
    let asynchronous: Bool
    let blockSize: Int64
    /// Leases `count` keys of an entity from PostgreSQL, or `nil` when it is unreachable.
    private let leaseHandler = Lock<(@Sendable (_ entity: Int, _ count: Int64) -> ClosedRange<Int64>?)?>(nil)

    init(asynchronous: Bool, blockSize: Int64, ranges: [Int: [ClosedRange<Int64>]]) {
        self.asynchronous = asynchronous
        self.blockSize = max(1, blockSize)
        state.withLock { $0.ranges = ranges }
    }

    /// Sets how a save short of keys leases more at once.
    func setLease(_ body: @escaping @Sendable (_ entity: Int, _ count: Int64) -> ClosedRange<Int64>?) {
        leaseHandler.withLock { $0 = body }
    }

    func allocateKeys(for entity: Int, count: Int, next: PrimaryKey) -> ClosedRange<PrimaryKey>? {
        guard asynchronous else {
            guard let floor = state.withLock({ $0.floors[entity] }), floor > next else { return nil }
            return floor...(floor + Int64(count) - 1)
        }
        if let keys = take(entity, count) { return keys }
        if let leased = leaseHandler.withLock({ $0 })?(entity, max(blockSize, Int64(count))) {
            add(leased, for: entity)
            if let keys = take(entity, count) { return keys }
        }
        state.withLock { $0.exhausted = entity }
        return nil
    }

    /// Takes `count` consecutive keys from the first leased range that has them.
    private func take(_ entity: Int, _ count: Int) -> ClosedRange<Int64>? {
        state.withLock { state in
            guard let index = state.ranges[entity]?.firstIndex(where: { $0.count >= count }) else { return nil }
            let range = state.ranges[entity]![index]
            let keys = range.lowerBound...(range.lowerBound + Int64(count) - 1)
            if keys.upperBound == range.upperBound {
                state.ranges[entity]!.remove(at: index)
            } else {
                state.ranges[entity]![index] = (keys.upperBound + 1)...range.upperBound
            }
            state.changed = true
            return keys
        }
    }

    /// Adds a leased range.
    func add(_ range: ClosedRange<Int64>, for entity: Int) {
        state.withLock { state in
            state.ranges[entity, default: []].append(range)
            state.changed = true
        }
    }

    /// The entities whose reserve fell below half a block, in asynchronous mode.
    func entitiesToRefill(_ entities: some Sequence<Int>) -> [Int] {
        guard asynchronous else { return [] }
        return state.withLock { state in
            entities.filter { (state.ranges[$0] ?? []).reduce(0) { $0 + Int64($1.count) } < blockSize / 2 }
        }
    }

    /// Sets the synchronous floors read from `strata_keys`.
    func setFloors(_ floors: [Int: Int64]) {
        state.withLock { $0.floors = floors }
    }

    /// The ranges to record in the store, when they changed.
    func changedRanges() -> [Int: [ClosedRange<Int64>]]? {
        state.withLock { $0.changed ? $0.ranges : nil }
    }

    /// Notes that the store recorded `ranges`.
    func recorded(_ ranges: [Int: [ClosedRange<Int64>]]) {
        state.withLock { if $0.ranges == ranges { $0.changed = false } }
    }

    /// Forgets a failed allocation of a save that ended before its commit.
    func beginSave() {
        state.withLock { $0.exhausted = nil }
    }

    /// Fails a save that found no keys.
    ///
    /// - Throws: ``CoreDataError`` `persistentStoreSave` when an allocation found none.
    func checkAllocations() throws {
        guard
            let entity = state.withLock({ state in
                defer { state.exhausted = nil }
                return state.exhausted
            })
        else { return }
        throw CoreDataError(
            .persistentStoreSave,
            "the primary keys this instance leased for inserting while PostgreSQL is unreachable are used up (engine entity \(entity)); "
                + "nothing was saved: save again once PostgreSQL is reachable, or raise MirrorConfiguration.keyBlockSize"
        )
    }

    /// Leases `count` keys of `entity` (call in a transaction holding the head lock, which
    /// orders leases with synchronous saves).
    static func lease(
        _ entity: Int, count: Int64, on connection: PostgresConnection, logger: Logger
    ) async throws -> ClosedRange<Int64> {
        let entity = Int32(entity)
        try await connection.send(
            """
            INSERT INTO strata_keys (entity, next) SELECT \(entity), COALESCE(max(pk), 0) + 1 FROM strata_object WHERE entity = \(entity)
            ON CONFLICT DO NOTHING
            """, logger: logger)
        for try await first in try await connection.send(
            "UPDATE strata_keys SET next = next + \(count) WHERE entity = \(entity) RETURNING next - \(count)",
            logger: logger
        ).decode(Int64.self) {
            return first...(first + count - 1)
        }
        throw MirrorError.malformedPayload("strata_keys has no row for entity \(entity)")
    }

    /// The floors of every entity (call holding the head lock).
    static func floors(on connection: PostgresConnection, logger: Logger) async throws -> [Int: Int64] {
        var floors: [Int: Int64] = [:]
        for try await (entity, next) in try await connection.send(
            "SELECT entity, next FROM strata_keys", logger: logger
        ).decode((Int32, Int64).self) {
            floors[Int(entity)] = next
        }
        return floors
    }
}
