// Core Data's global error-code constants without `NS` (`NSValidationMultipleErrorsError` is
// ``ValidationMultipleErrorsError``), for code that compares `(error as NSError).code`.

/// ``CoreDataError/Code/managedObjectValidation`` (1550).
public let ManagedObjectValidationError = CoreDataError.Code.managedObjectValidation.rawValue
/// ``CoreDataError/Code/managedObjectConstraintValidation`` (1551).
public let ManagedObjectConstraintValidationError = CoreDataError.Code.managedObjectConstraintValidation.rawValue
/// ``CoreDataError/Code/validationMultipleErrors`` (1560).
public let ValidationMultipleErrorsError = CoreDataError.Code.validationMultipleErrors.rawValue
/// ``CoreDataError/Code/validationMissingMandatoryProperty`` (1570).
public let ValidationMissingMandatoryPropertyError = CoreDataError.Code.validationMissingMandatoryProperty.rawValue
/// ``CoreDataError/Code/validationRelationshipLacksMinimumCount`` (1580).
public let ValidationRelationshipLacksMinimumCountError = CoreDataError.Code.validationRelationshipLacksMinimumCount
    .rawValue
/// ``CoreDataError/Code/validationRelationshipExceedsMaximumCount`` (1590).
public let ValidationRelationshipExceedsMaximumCountError = CoreDataError.Code.validationRelationshipExceedsMaximumCount
    .rawValue
/// ``CoreDataError/Code/validationRelationshipDeniedDelete`` (1600).
public let ValidationRelationshipDeniedDeleteError = CoreDataError.Code.validationRelationshipDeniedDelete.rawValue
/// ``CoreDataError/Code/validationNumberTooLarge`` (1610).
public let ValidationNumberTooLargeError = CoreDataError.Code.validationNumberTooLarge.rawValue
/// ``CoreDataError/Code/validationNumberTooSmall`` (1620).
public let ValidationNumberTooSmallError = CoreDataError.Code.validationNumberTooSmall.rawValue
/// ``CoreDataError/Code/validationDateTooLate`` (1630).
public let ValidationDateTooLateError = CoreDataError.Code.validationDateTooLate.rawValue
/// ``CoreDataError/Code/validationDateTooSoon`` (1640).
public let ValidationDateTooSoonError = CoreDataError.Code.validationDateTooSoon.rawValue
/// ``CoreDataError/Code/validationInvalidDate`` (1650).
public let ValidationInvalidDateError = CoreDataError.Code.validationInvalidDate.rawValue
/// ``CoreDataError/Code/validationStringTooLong`` (1660).
public let ValidationStringTooLongError = CoreDataError.Code.validationStringTooLong.rawValue
/// ``CoreDataError/Code/validationStringTooShort`` (1670).
public let ValidationStringTooShortError = CoreDataError.Code.validationStringTooShort.rawValue
/// ``CoreDataError/Code/validationStringPatternMatching`` (1680).
public let ValidationStringPatternMatchingError = CoreDataError.Code.validationStringPatternMatching.rawValue
/// ``CoreDataError/Code/managedObjectReferentialIntegrity`` (133000).
public let ManagedObjectReferentialIntegrityError = CoreDataError.Code.managedObjectReferentialIntegrity.rawValue
/// ``CoreDataError/Code/managedObjectExternalRelationship`` (133010).
public let ManagedObjectExternalRelationshipError = CoreDataError.Code.managedObjectExternalRelationship.rawValue
/// ``CoreDataError/Code/managedObjectMerge`` (133020).
public let ManagedObjectMergeError = CoreDataError.Code.managedObjectMerge.rawValue
/// ``CoreDataError/Code/managedObjectConstraintMerge`` (133021).
public let ManagedObjectConstraintMergeError = CoreDataError.Code.managedObjectConstraintMerge.rawValue
/// ``CoreDataError/Code/persistentStoreInvalidType`` (134000).
public let PersistentStoreInvalidTypeError = CoreDataError.Code.persistentStoreInvalidType.rawValue
/// ``CoreDataError/Code/persistentStoreIncompatibleSchema`` (134020).
public let PersistentStoreIncompatibleSchemaError = CoreDataError.Code.persistentStoreIncompatibleSchema.rawValue
/// ``CoreDataError/Code/persistentStoreSave`` (134030).
public let PersistentStoreSaveError = CoreDataError.Code.persistentStoreSave.rawValue
/// ``CoreDataError/Code/persistentStoreOperation`` (134070).
public let PersistentStoreOperationError = CoreDataError.Code.persistentStoreOperation.rawValue
/// ``CoreDataError/Code/persistentStoreOpen`` (134080).
public let PersistentStoreOpenError = CoreDataError.Code.persistentStoreOpen.rawValue
/// ``CoreDataError/Code/persistentStoreIncompatibleVersionHash`` (134100).
public let PersistentStoreIncompatibleVersionHashError = CoreDataError.Code.persistentStoreIncompatibleVersionHash
    .rawValue
/// ``CoreDataError/Code/persistentHistoryTokenExpired`` (134301).
public let PersistentHistoryTokenExpiredError = CoreDataError.Code.persistentHistoryTokenExpired.rawValue
