import Foundation

/// The key of ``CoreDataError``'s `NSError` `userInfo` for the errors of each object when several
/// failed: an array of `NSError` (Core Data's `NSDetailedErrorsKey`).
public let DetailedErrorsKey = "NSDetailedErrors"
/// The key of the `userInfo` for the key that failed validation (Core Data's `NSValidationKeyErrorKey`).
public let ValidationKeyErrorKey = "NSValidationErrorKey"
/// The key of the `userInfo` for the managed object that failed validation (Core Data's
/// `NSValidationObjectErrorKey`).
public let ValidationObjectErrorKey = "NSValidationErrorObject"
/// The key of the `userInfo` for the value that failed validation (Core Data's `NSValidationValueErrorKey`).
public let ValidationValueErrorKey = "NSValidationErrorValue"

/// The object and value a validation error is about. Held weakly for the object, so that an
/// error kept or sent elsewhere does not keep the object (and its context's queue rules) alive.
// @unchecked: the object and value are only read, and, as Core Data's `userInfo` entries,
// belong to the object's context queue.
final class ValidatedValue: @unchecked Sendable {
    weak var object: ManagedObject?
    let value: Any?

    init(object: ManagedObject, value: Any?) {
        self.object = object
        self.value = value
    }
}

extension CoreDataError: CustomNSError {
    /// Creates an error about `object`'s property `key` holding `value` (a validation error).
    ///
    /// - Parameters:
    ///   - code: the Core Data error code.
    ///   - message: what failed, in a sentence.
    ///   - object: the object concerned (`NSValidationObjectErrorKey`); its ID is ``objectID``.
    ///   - key: the key concerned (`NSValidationKeyErrorKey`).
    ///   - value: the value concerned (`NSValidationValueErrorKey`).
    public init(_ code: Code, _ message: String, object: ManagedObject, key: String? = nil, value: Any? = nil) {
        self.init(code, message, objectID: object.objectID, key: key)
        validated = ValidatedValue(object: object, value: value)
    }

    /// The object that failed validation, while it exists (`NSValidationObjectErrorKey`). Use it
    /// on its context's queue.
    public var object: ManagedObject? { validated?.object }

    /// The value that failed validation, if known (`NSValidationValueErrorKey`).
    public var value: Any? { validated?.value }

    /// `NSCocoaErrorDomain`, Core Data's error domain.
    public static var errorDomain: String { NSCocoaErrorDomain }

    /// The Core Data error code.
    public var errorCode: Int { code.rawValue }

    /// The `userInfo` of the bridged `NSError`, as Core Data fills it: the message
    /// (`NSLocalizedDescriptionKey`), ``DetailedErrorsKey``, ``ValidationKeyErrorKey``,
    /// ``ValidationObjectErrorKey``, ``ValidationValueErrorKey`` and `NSUnderlyingErrorKey`
    /// where they apply.
    public var errorUserInfo: [String: Any] {
        var info: [String: Any] = [NSLocalizedDescriptionKey: message]
        if !detailedErrors.isEmpty { info[DetailedErrorsKey] = detailedErrors.map { $0 as NSError } }
        if let key { info[ValidationKeyErrorKey] = key }
        if let object { info[ValidationObjectErrorKey] = object }
        if let value { info[ValidationValueErrorKey] = value }
        if let underlyingError { info[NSUnderlyingErrorKey] = underlyingError as NSError }
        return info
    }
}
