/// An error of the object graph, with Core Data's error codes. `Sendable`.
///
/// A save that fails validation for several objects throws one error with code
/// ``Code/validationMultipleErrors`` whose ``detailedErrors`` lists each failure, as Core Data's
/// `NSDetailedErrorsKey` does.
public struct CoreDataError: Error, Sendable, CustomStringConvertible {
    /// A Core Data error code (`NSCocoaErrorDomain` numbers). An extensible set.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The numeric code, as Core Data's.
        public let rawValue: Int
        /// Creates a code from its number.
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// The number.
        public var description: String { String(rawValue) }

        /// Generic validation error (`NSManagedObjectValidationError`).
        public static let managedObjectValidation = Code(rawValue: 1550)
        /// A uniqueness constraint is violated (`NSManagedObjectConstraintValidationError`).
        public static let managedObjectConstraintValidation = Code(rawValue: 1551)
        /// Several validation errors; see ``CoreDataError/detailedErrors`` (`NSValidationMultipleErrorsError`).
        public static let validationMultipleErrors = Code(rawValue: 1560)
        /// A non-optional property has no value (`NSValidationMissingMandatoryPropertyError`).
        public static let validationMissingMandatoryProperty = Code(rawValue: 1570)
        /// A to-many relationship has too few objects.
        public static let validationRelationshipLacksMinimumCount = Code(rawValue: 1580)
        /// A to-many relationship has too many objects.
        public static let validationRelationshipExceedsMaximumCount = Code(rawValue: 1590)
        /// A delete was denied by a relationship's deny rule.
        public static let validationRelationshipDeniedDelete = Code(rawValue: 1600)
        /// A number is larger than the attribute's maximum.
        public static let validationNumberTooLarge = Code(rawValue: 1610)
        /// A number is smaller than the attribute's minimum.
        public static let validationNumberTooSmall = Code(rawValue: 1620)
        /// A date is later than the attribute's maximum.
        public static let validationDateTooLate = Code(rawValue: 1630)
        /// A date is earlier than the attribute's minimum.
        public static let validationDateTooSoon = Code(rawValue: 1640)
        /// A value is not of the attribute's type.
        public static let validationInvalidDate = Code(rawValue: 1650)
        /// A string is longer than the attribute's maximum.
        public static let validationStringTooLong = Code(rawValue: 1660)
        /// A string is shorter than the attribute's minimum.
        public static let validationStringTooShort = Code(rawValue: 1670)
        /// A string does not match the attribute's regular expression.
        public static let validationStringPatternMatching = Code(rawValue: 1680)
        /// An object or ID from another context or coordinator was used (`NSManagedObjectReferentialIntegrityError`).
        public static let managedObjectReferentialIntegrity = Code(rawValue: 133000)
        /// A relationship points at an object in another store.
        public static let managedObjectExternalRelationship = Code(rawValue: 133010)
        /// Optimistic locking failed: the store changed under the context (`NSManagedObjectMergeError`).
        public static let managedObjectMerge = Code(rawValue: 133020)
        /// A uniqueness constraint conflict on save (`NSManagedObjectConstraintMergeError`).
        public static let managedObjectConstraintMerge = Code(rawValue: 133021)
        /// The store type is unknown.
        public static let persistentStoreInvalidType = Code(rawValue: 134000)
        /// The store's model does not match (`NSPersistentStoreIncompatibleSchemaError`).
        public static let persistentStoreIncompatibleSchema = Code(rawValue: 134020)
        /// A save failed in the store (`NSPersistentStoreSaveError`).
        public static let persistentStoreSave = Code(rawValue: 134030)
        /// A generic Core Data error (`NSCoreDataError`).
        public static let coreData = Code(rawValue: 134060)
        /// A store operation failed (`NSPersistentStoreOperationError`).
        public static let persistentStoreOperation = Code(rawValue: 134070)
        /// The store could not be opened (`NSPersistentStoreOpenError`).
        public static let persistentStoreOpen = Code(rawValue: 134080)
        /// The store's model version hashes differ (`NSPersistentStoreIncompatibleVersionHashError`).
        public static let persistentStoreIncompatibleVersionHash = Code(rawValue: 134100)
        /// A key is not a property of the entity, or a value has the wrong type
        /// (`NSKeyValueValidationError`), thrown by the `forChecked…` key-value calls.
        public static let keyValueValidation = Code(rawValue: 1024)
        /// The history asked for was deleted (`NSPersistentHistoryTokenExpiredError`).
        public static let persistentHistoryTokenExpired = Code(rawValue: 134301)
    }

    /// The error code.
    public var code: Code
    /// What failed, in a sentence.
    public var message: String
    /// The object concerned, if any (`NSValidationObjectErrorKey`).
    public var objectID: ManagedObjectID?
    /// The key concerned, if any (`NSValidationKeyErrorKey`).
    public var key: String?
    /// The errors of each object when several failed (`NSDetailedErrorsKey`).
    public var detailedErrors: [CoreDataError]
    /// The underlying error, such as a `StoreError`.
    public var underlyingError: (any Error & Sendable)?
    /// The object and value that failed validation, when known (see `CoreDataError+NSError.swift`).
    var validated: ValidatedValue?

    /// Creates an error.
    public init(
        _ code: Code, _ message: String, objectID: ManagedObjectID? = nil, key: String? = nil,
        detailedErrors: [CoreDataError] = [], underlyingError: (any Error & Sendable)? = nil
    ) {
        self.code = code
        self.message = message
        self.objectID = objectID
        self.key = key
        self.detailedErrors = detailedErrors
        self.underlyingError = underlyingError
    }

    /// The code, message and details in one line.
    public var description: String {
        var text = "CoreDataError \(code): \(message)"
        if !detailedErrors.isEmpty { text += " [" + detailedErrors.map(\.description).joined(separator: "; ") + "]" }
        if let underlyingError { text += " (\(underlyingError))" }
        return text
    }
}
