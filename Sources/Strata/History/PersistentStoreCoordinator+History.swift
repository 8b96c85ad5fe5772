extension PersistentStoreCoordinator {
    /// The token of the newest transaction of the first of `stores` (every store when `nil`) that
    /// keeps persistent history (Core Data's `currentPersistentHistoryToken(fromStores:)`).
    /// Fetching history after it returns what is saved from now on.
    ///
    /// - Parameter stores: ``PersistentStore``s of this coordinator; other elements are ignored.
    /// - Returns: the token, or `nil` when none of the stores keeps history.
    public func currentPersistentHistoryToken(fromStores stores: [Any]?) -> PersistentHistoryToken? {
        let candidates = stores.map { $0.compactMap { $0 as? PersistentStore } } ?? persistentStores
        for store in candidates where store.keepsHistory {
            guard let sequence = store.newestHistorySequence, self.store(identifier: store.identifier) === store else {
                continue
            }
            return PersistentHistoryToken(storeIdentifier: store.identifier, sequence: sequence)
        }
        return nil
    }
}
