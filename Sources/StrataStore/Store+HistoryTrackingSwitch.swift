import Foundation
import Logging

extension Recovery {
    /// Core Data's warning when a store that kept history is opened without it.
    static let forcedReadOnlyWarning: Logger.Message =
        "Store opened without NSPersistentHistoryTrackingKey but previously had been opened with NSPersistentHistoryTrackingKey - Forcing into Read Only mode store"

    /// Sets in `effective` the history tracking an existing store opens with: the manifest's,
    /// unless ``StoreConfiguration/historyTrackingFollowsConfiguration`` asks to follow
    /// ``StoreConfiguration/historyTracking``. Then a store that kept history, opened without
    /// it, is forced read-only (its write lock released, a warning logged); returns whether a
    /// store that kept none starts keeping history now.
    func historyTrackingSwitch(
        _ manifest: Manifest, effective: inout StoreConfiguration, lockFD: Int32, lockHandedOver: inout Bool
    ) -> Bool {
        effective.historyTracking = manifest.historyTracking
        guard configuration.historyTrackingFollowsConfiguration,
            configuration.historyTracking != manifest.historyTracking,
            !configuration.readOnly
        else { return false }
        if configuration.historyTracking {
            effective.historyTracking = true
            return true
        }
        configuration.logger.warning(Self.forcedReadOnlyWarning, metadata: ["path": "\(path)"])
        effective.readOnly = true
        if lockFD >= 0 {
            configuration.io.unlock(lockFD)
            configuration.io.close(lockFD)
        }
        lockHandedOver = true
        return false
    }
}

extension Store {
    /// Starts keeping the history of a store that kept none: the history begins after the
    /// newest transaction (so fetching from the start, or after an earlier date, returns what
    /// exists), and the manifest records that the store keeps history.
    func startHistoryTracking() throws {
        try manifestLock.withLock { status in
            let floor = state.withLock { state in
                state.historyFloor = state.lastSequence
                state.history.removeAll()
                return state.historyFloor
            }
            status.historyTracking = true
            try publishManifest(status)
            logger.info(
                "the store keeps persistent history from now on", metadata: ["path": "\(path)", "sequence": "\(floor)"])
        }
    }
}
