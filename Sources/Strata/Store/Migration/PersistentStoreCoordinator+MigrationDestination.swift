internal import StrataStore

extension PersistentStoreCoordinator {
    /// The options of the store a migration writes beside the old one before the two are
    /// exchanged: relaxed durability (the exchange syncs the new store's directory), and the
    /// persistent history tracking `description` asks for.
    static func migrationDestinationOptions(for description: PersistentStoreDescription) -> [AnyHashable: Any] {
        var options: [AnyHashable: Any] = [PersistentStoreOptionKey.durability: Durability.relaxed]
        options[PersistentHistoryTrackingKey] = description.options[PersistentHistoryTrackingKey]
        return options
    }
}
