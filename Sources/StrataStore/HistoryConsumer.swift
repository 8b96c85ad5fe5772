import Foundation
import Metrics

/// A named reader of a store's history with its own cursor, kept in the store. `Sendable`.
public struct HistoryConsumerState: Sendable, Hashable {
    /// The sequence of the last transaction the consumer applied.
    public var sequence: UInt64
    /// When the cursor last moved (or the consumer registered).
    public var advanced: Date
    /// For an evicted consumer, the sequence to resync from (the store's newest when it was
    /// evicted); `nil` while the consumer is live.
    public var evictedAt: UInt64?

    /// Writes the state into a manifest body.
    func encode(into writer: inout BinaryWriter) {
        writer.u64(sequence)
        writer.u64(advanced.timeIntervalSinceReferenceDate.bitPattern)
        writer.u64(evictedAt.map { $0 + 1 } ?? 0)
    }

    /// Whether the consumer named `name` reads this store's history, so that its cursor holds
    /// the history floor and lags can evict it. A replay cursor (``Store/replayConsumerName(source:)``)
    /// counts another store's sequences: it holds no history of this store and is never evicted.
    static func holdsHistory(named name: String) -> Bool {
        !name.hasPrefix(Store.replayConsumerPrefix)
    }

    /// Reads a state ``encode(into:)`` wrote.
    static func decode(from reader: inout BinaryReader) throws -> HistoryConsumerState {
        let sequence = try reader.sequence()
        let advanced = Date(timeIntervalSinceReferenceDate: Double(bitPattern: try reader.u64()))
        let evicted = try reader.sequence()
        return HistoryConsumerState(sequence: sequence, advanced: advanced, evictedAt: evicted == 0 ? nil : evicted - 1)
    }
}

extension StoreState {
    /// Moves the cursors of live consumers named in `cursors` forward (never back) and raises
    /// the history floor they held (never above the newest sequence). Moving only replay
    /// cursors, which hold no history, leaves the floor as it is without working it out again.
    mutating func advanceConsumers(_ cursors: [String: UInt64], now: Date = Date()) {
        var holdsHistory = false
        for (name, cursor) in cursors {
            guard var consumer = consumers[name] else { continue }
            if let evictedAt = consumer.evictedAt {
                // An evicted consumer comes back by advancing to at least its resync point.
                guard cursor >= evictedAt else { continue }
                consumer.evictedAt = nil
            }
            consumer.sequence = Swift.max(consumer.sequence, cursor)
            consumer.advanced = now
            consumers[name] = consumer
            if !holdsHistory { holdsHistory = HistoryConsumerState.holdsHistory(named: name) }
        }
        if holdsHistory { _ = raiseHistoryFloor() }
    }

    /// Raises the history floor to the lowest of the requested floor and the live consumers'
    /// cursors, dropping the history below it. Returns whether it moved.
    mutating func raiseHistoryFloor() -> Bool {
        let held =
            consumers.filter { $0.value.evictedAt == nil && HistoryConsumerState.holdsHistory(named: $0.key) }
            .map(\.value.sequence).min() ?? .max
        let target = Swift.min(requestedHistoryFloor, held, lastSequence)
        guard target > historyFloor else { return false }
        historyFloor = target
        // The history is in sequence order (a replay sorts it when it ends): its first entries
        // up to the first one above the floor go, and none above the floor ever does.
        history.removeFirst(history.prefix { $0.sequence <= target }.count)
        return true
    }
}

/// Consumers evicted for holding back too much history.
private let evictions = Counter(label: "strata_history_consumers_evicted")

extension Store {
    /// The history consumers of the store, by name, live and evicted.
    public var historyConsumers: [String: HistoryConsumerState] {
        state.withLock { $0.consumers }
    }

    /// Registers the history consumer `name` with its cursor at the oldest retained history (it
    /// will read everything still kept), or returns the existing consumer's state. Writes the manifest.
    ///
    /// Names starting with ``replayConsumerPrefix`` are replay cursors: they count another
    /// store's sequences (from 0), hold none of this store's history and are never evicted.
    ///
    /// - Throws: ``StoreError`` `historyUnavailable` when history tracking is off; `io`/`diskFull`.
    @discardableResult
    public func registerHistoryConsumer(_ name: String) throws -> HistoryConsumerState {
        try checkOpen(writing: true)
        guard configuration.historyTracking else {
            throw StoreError(.historyUnavailable, "history tracking is off for this store", path: path)
        }
        try evictLaggingHistoryConsumers()
        return try manifestLock.withLock { status in
            let (consumer, added) = state.withLock { state in
                if let existing = state.consumers[name] { return (existing, false) }
                let start = HistoryConsumerState.holdsHistory(named: name) ? state.historyFloor : 0
                let consumer = HistoryConsumerState(sequence: start, advanced: Date(), evictedAt: nil)
                state.consumers[name] = consumer
                return (consumer, true)
            }
            if added {
                try publishManifest(status)
                logger.debug(
                    "registered history consumer",
                    metadata: ["consumer": "\(name)", "sequence": "\(consumer.sequence)"])
            }
            return consumer
        }
    }

    /// Moves the cursor of consumer `name` to `sequence` (never back), letting the history
    /// floor rise to what other consumers and `deleteHistory(before:)` allow. An evicted
    /// consumer becomes live again by advancing to at least its resync point. Writes the manifest.
    ///
    /// To advance in the same commit as the changes a consumer applied, set
    /// ``Transaction/consumerCursors`` instead.
    ///
    /// - Throws: ``StoreError`` `historyUnavailable` for a consumer the store does not know or an
    ///   evicted one advanced below its resync point; `io`/`diskFull`.
    public func advanceHistoryConsumer(_ name: String, to sequence: UInt64) throws {
        try checkOpen(writing: true)
        try manifestLock.withLock { status in
            let known = state.withLock { state -> HistoryConsumerState? in
                guard state.consumers[name] != nil else { return nil }
                state.advanceConsumers([name: sequence])
                return state.consumers[name]
            }
            guard let known else {
                throw StoreError(.historyUnavailable, "no history consumer named \(name)", path: path)
            }
            if let resync = known.evictedAt {
                throw StoreError(
                    .historyUnavailable,
                    "history consumer \(name) was evicted; resync and advance to at least \(resync)", path: path)
            }
            try publishManifest(status)
        }
        maintenance.wake()
    }

    /// Removes the history consumer `name`, releasing the history it held. Writes the manifest.
    ///
    /// - Throws: ``StoreError`` `io`/`diskFull`.
    public func removeHistoryConsumer(_ name: String) throws {
        try checkOpen(writing: true)
        try manifestLock.withLock { status in
            let removed = state.withLock { state in
                guard state.consumers.removeValue(forKey: name) != nil else { return false }
                _ = state.raiseHistoryFloor()
                return true
            }
            if removed { try publishManifest(status) }
        }
        maintenance.wake()
    }

    /// Evicts the live consumers that hold back a `deleteHistory(before:)` by more than
    /// ``StoreConfiguration/historyConsumerLagLimit`` bytes or
    /// ``StoreConfiguration/historyConsumerAgeLimit`` seconds without advancing, and raises the
    /// history floor they held. Writes the manifest when it evicted one.
    ///
    /// It also runs when the store opens, when compaction computes what history it keeps, when
    /// `deleteHistory(before:)` moves the floor and when a consumer registers, so a consumer
    /// that stopped never holds history back for long after its bound. A read-only store evicts nothing.
    ///
    /// - Returns: the names of the consumers it evicted.
    /// - Throws: ``StoreError`` `io`/`diskFull` when the manifest cannot be written; `closed`.
    @discardableResult
    public func evictLaggingHistoryConsumers() throws -> [String] {
        try checkOpen()
        guard !configuration.readOnly,
            configuration.historyConsumerLagLimit != nil || configuration.historyConsumerAgeLimit != nil
        else { return [] }
        return try manifestLock.withLock { status in
            let evicted = evictLaggingConsumers()
            guard !evicted.isEmpty else { return [] }
            state.withLock { _ = $0.raiseHistoryFloor() }
            try publishManifest(status)
            return evicted
        }
    }

    /// Evicts the live consumers that hold back the requested history floor by more than the
    /// configured bytes or age, returning their names. Call with the manifest lock held; the
    /// caller raises the floor and writes the manifest.
    @discardableResult
    func evictLaggingConsumers(now: Date = Date()) -> [String] {
        let bytesLimit = configuration.historyConsumerLagLimit
        let ageLimit = configuration.historyConsumerAgeLimit
        guard bytesLimit != nil || ageLimit != nil else { return [] }
        let evicted = state.withLock { state -> [(String, UInt64, Int)] in
            var evicted: [(String, UInt64, Int)] = []
            for (name, consumer) in state.consumers
            where consumer.evictedAt == nil && HistoryConsumerState.holdsHistory(named: name)
                && consumer.sequence < state.requestedHistoryFloor
            {
                let start = state.history.partitioningIndex { $0.sequence > consumer.sequence }
                let end = state.history.partitioningIndex { $0.sequence > state.requestedHistoryFloor }
                let bytes = start < end ? state.history[start..<end].reduce(0) { $0 + $1.length } : 0
                let tooBig = bytesLimit.map { bytes > $0 } ?? false
                let tooOld = ageLimit.map { now.timeIntervalSince(consumer.advanced) > $0 } ?? false
                guard tooBig || tooOld else { continue }
                state.consumers[name]!.evictedAt = state.lastSequence
                evicted.append((name, consumer.sequence, bytes))
            }
            return evicted
        }
        for (name, sequence, bytes) in evicted {
            evictions.increment()
            logger.warning(
                "evicted a history consumer that held back deleted history",
                metadata: [
                    "consumer": "\(name)", "cursor": "\(sequence)", "heldBytes": "\(bytes)", "path": "\(path)",
                ])
        }
        return evicted.map(\.0)
    }
}
