extension CoreDataError.Code {
    /// A migration failed (`NSMigrationError`).
    public static let migration = Self(rawValue: 134110)
    /// A migration would violate a uniqueness constraint (`NSMigrationConstraintViolationError`).
    public static let migrationConstraintViolation = Self(rawValue: 134111)
    /// A migration was cancelled (`NSMigrationCancelledError`).
    public static let migrationCancelled = Self(rawValue: 134120)
    /// The model the store was written with is not known (`NSMigrationMissingSourceModelError`).
    public static let migrationMissingSourceModel = Self(rawValue: 134130)
    /// No mapping model leads from the store's model to the model asked for
    /// (`NSMigrationMissingMappingModelError`).
    public static let migrationMissingMappingModel = Self(rawValue: 134140)
    /// The source store of a migration could not be read (`NSMigrationManagerSourceStoreError`).
    public static let migrationManagerSourceStore = Self(rawValue: 134150)
    /// The destination store of a migration could not be written
    /// (`NSMigrationManagerDestinationStoreError`).
    public static let migrationManagerDestinationStore = Self(rawValue: 134160)
    /// An entity migration policy failed (`NSEntityMigrationPolicyError`).
    public static let entityMigrationPolicy = Self(rawValue: 134170)
    /// A mapping model cannot be inferred (`NSInferredMappingModelError`).
    public static let inferredMappingModel = Self(rawValue: 134190)
}

/// ``CoreDataError/Code/migration`` (134110).
public let MigrationError = CoreDataError.Code.migration.rawValue
/// ``CoreDataError/Code/migrationConstraintViolation`` (134111).
public let MigrationConstraintViolationError = CoreDataError.Code.migrationConstraintViolation.rawValue
/// ``CoreDataError/Code/migrationCancelled`` (134120).
public let MigrationCancelledError = CoreDataError.Code.migrationCancelled.rawValue
/// ``CoreDataError/Code/migrationMissingSourceModel`` (134130).
public let MigrationMissingSourceModelError = CoreDataError.Code.migrationMissingSourceModel.rawValue
/// ``CoreDataError/Code/migrationMissingMappingModel`` (134140).
public let MigrationMissingMappingModelError = CoreDataError.Code.migrationMissingMappingModel.rawValue
/// ``CoreDataError/Code/migrationManagerSourceStore`` (134150).
public let MigrationManagerSourceStoreError = CoreDataError.Code.migrationManagerSourceStore.rawValue
/// ``CoreDataError/Code/migrationManagerDestinationStore`` (134160).
public let MigrationManagerDestinationStoreError = CoreDataError.Code.migrationManagerDestinationStore.rawValue
/// ``CoreDataError/Code/entityMigrationPolicy`` (134170).
public let EntityMigrationPolicyError = CoreDataError.Code.entityMigrationPolicy.rawValue
/// ``CoreDataError/Code/inferredMappingModel`` (134190).
public let InferredMappingModelError = CoreDataError.Code.inferredMappingModel.rawValue
