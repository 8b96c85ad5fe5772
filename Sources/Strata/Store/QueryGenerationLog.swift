import Foundation
internal import StrataStore
import StrataSynchronization
import Synchronization

/// The row versions a store's pinned query generations still read: while any generation is
/// pinned, every commit through the coordinator first records the rows it is about to replace
/// (their pre-images, `nil` for a new row) with the sequence they were current at.
///
/// Pre-images are decoded copies held in memory, so compaction rewriting or dropping the log
/// segments the old rows lived in changes nothing for a pinned reader; memory grows with the
/// rows changed while a generation is pinned, and is released when the last pin on a sequence
/// goes away. `Sendable`: its state is behind locks.
final class QueryGenerationLog: Sendable {
    /// A pre-image: the row as it was at every sequence from `after` until the commit that
    /// followed `after` (the row is `nil` when that commit inserted it).
    struct Version: Sendable {
        var after: UInt64
        var row: Row?
    }

    private struct State {
        /// The pinned sequences, with how many pins hold each.
        var pins: [UInt64: Int] = [:]
        /// Pins being taken: while any is, commits record pre-images.
        var pinning = 0
        /// Pre-images by entity and key, oldest first.
        var versions: [Int: [PrimaryKey: [Version]]] = [:]
    }

    private let state = Lock(State())
    /// Held while pinning and while committing with pre-images, so that those commits (and the
    /// sequence each pre-image is current at) are serialized with each other and with pins.
    private let commitLock = Lock(())
    /// Entered by each commit that records no pre-images (no generation pinned) until it
    /// returns: such commits run concurrently and share the engine's group commit, and a pin
    /// waits for them so that none lands after the pinned sequence without its pre-images.
    private let unrecordedCommits = DispatchGroup()

    /// Pins the current generation of `rows`: its newest sequence.
    func pin(_ rows: any RowStore) -> UInt64 {
        commitLock.withLock { _ in
            state.withLock { $0.pinning += 1 }
            unrecordedCommits.wait()
            let sequence = rows.lastSequence
            state.withLock { state in
                state.pinning -= 1
                state.pins[sequence, default: 0] += 1
            }
            return sequence
        }
    }

    /// Releases one pin of `sequence`, dropping the pre-images no remaining pin reads.
    func release(_ sequence: UInt64) {
        state.withLock { state in
            state.pins[sequence]! -= 1
            if state.pins[sequence] == 0 { state.pins[sequence] = nil }
            guard let oldest = state.pins.keys.min() else {
                state.versions = [:]
                return
            }
            state.versions = state.versions.mapValues { byKey in
                byKey.compactMapValues { versions in
                    let kept = versions.filter { $0.after >= oldest }
                    return kept.isEmpty ? nil : kept
                }
            }
        }
    }

    /// Commits `transaction` to `rows`, first recording the pre-images of the rows it changes
    /// when a generation is pinned. Without a pinned generation, commits run concurrently (and
    /// share the engine's group commit); while one is pinned, they run one at a time.
    ///
    /// - Returns: the commit's sequence.
    /// - Throws: what the commit throws; the pre-images recorded for it are dropped then.
    func commit(_ transaction: Transaction, to rows: any RowStore) throws -> UInt64 {
        try committing(transaction.operations, to: rows) { try rows.commit(transaction) }
    }

    /// Runs `commit`, which commits `operations` to `rows` (in one or more transactions), first
    /// recording the pre-images of the rows they change when a generation is pinned, as
    /// ``commit(_:to:)`` does.
    ///
    /// - Throws: what `commit` throws; the pre-images recorded for it are dropped then.
    func committing<T>(
        _ operations: [StrataStore.Operation], to rows: any RowStore, _ commit: () throws -> T
    ) throws -> T {
        // Mapped only if a generation is pinned: a bulk commit's operations are many.
        let changes = operations.lazy.map { operation -> ReplayedChange in
            let kind: ChangeKind =
                switch operation {
                case .insert: .insert
                case .update: .update
                case .delete: .delete
                }
            return ReplayedChange(kind: kind, entity: operation.entity, key: operation.key)
        }
        return try committing(changes, to: rows, commit)
    }

    /// Runs `commit`, which makes `changes` to `rows`, recording pre-images as the overload taking operations does.
    func committing<T>(
        _ changes: some Sequence<ReplayedChange>, to rows: any RowStore, _ commit: () throws -> T
    ) throws -> T {
        let unrecorded = state.withLock { state in
            guard state.pins.isEmpty && state.pinning == 0 else { return false }
            unrecordedCommits.enter()
            return true
        }
        if unrecorded {
            defer { unrecordedCommits.leave() }
            return try commit()
        }
        return try commitLock.withLock { _ in
            guard state.withLock({ !$0.pins.isEmpty }) else { return try commit() }
            let after = rows.lastSequence
            var images: [EntityKey: Row?] = [:]
            for change in changes {
                let place = EntityKey(entity: change.entity, key: change.key)
                guard images[place] == nil else { continue }
                images[place] =
                    change.kind == .insert ? .some(nil) : .some(try rows.read(change.entity, key: change.key))
            }
            state.withLock { state in
                for (place, row) in images {
                    state.versions[place.entity, default: [:]][place.key, default: []].append(
                        Version(after: after, row: row))
                }
            }
            do {
                return try commit()
            } catch {
                state.withLock { state in
                    for place in images.keys {
                        state.versions[place.entity]?[place.key]?.removeAll { $0.after == after }
                    }
                }
                throw error
            }
        }
    }

    /// Whether any row of `entity` has a pre-image.
    func hasVersions(_ entity: Int) -> Bool {
        state.withLock { !($0.versions[entity]?.isEmpty ?? true) }
    }

    /// The row of `entity` at `key` as of `sequence`, when it changed since: `.some(nil)` when it
    /// did not exist then; `nil` when it did not change (the store's row is the one).
    func version(_ entity: Int, _ key: PrimaryKey, at sequence: UInt64) -> Row?? {
        state.withLock { state in
            state.versions[entity]?[key]?.first { $0.after >= sequence }.map(\.row)
        }
    }

    /// Every row of `entity` that changed since `sequence`, as it was then (`nil`: it did not exist).
    func versions(_ entity: Int, at sequence: UInt64) -> [PrimaryKey: Row?] {
        state.withLock { state in
            (state.versions[entity] ?? [:]).compactMapValues { versions -> Row?? in
                versions.first { $0.after >= sequence }.map(\.row)
            }
        }
    }
}
