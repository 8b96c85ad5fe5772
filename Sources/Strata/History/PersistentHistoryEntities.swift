import Foundation

/// The entities that describe history transactions and changes, and how history predicates read
/// their keys.
enum PersistentHistoryEntities {
    /// The name of the history transaction entity.
    static let transactionName = "PersistentHistoryTransaction"
    /// The name of the history change entity.
    static let changeName = "PersistentHistoryChange"

    /// A new description of the transaction entity.
    static func transaction() -> EntityDescription {
        EntityDescription(
            name: transactionName,
            properties: [
                AttributeDescription(name: "author", type: .string),
                AttributeDescription(name: "bundleID", type: .string),
                AttributeDescription(name: "contextName", type: .string),
                AttributeDescription(name: "processID", type: .string),
                AttributeDescription(name: "storeID", type: .string),
                AttributeDescription(name: "timestamp", type: .date),
                AttributeDescription(name: "transactionNumber", type: .integer64),
            ])
    }

    /// A new description of the change entity.
    static func change() -> EntityDescription {
        EntityDescription(
            name: changeName,
            properties: [
                AttributeDescription(name: "changeID", type: .integer64),
                AttributeDescription(name: "changeType", type: .integer64),
                AttributeDescription(name: "changedObjectID", type: .objectID),
                AttributeDescription(name: "tombstone", type: .transformable),
            ])
    }

    /// The value of `key` of a history transaction or change (or of what their keys return), as
    /// history predicates read it. `changeType` reads as its raw value and `changedEntity` (or
    /// `entity`) as the changed object's entity, whose `name` reads too.
    static func value(of object: Any, forKey key: String) throws -> Any? {
        switch object {
        case let transaction as PersistentHistoryTransaction:
            switch key {
            case "author": return transaction.author
            case "contextName": return transaction.contextName
            case "bundleID": return transaction.bundleID
            case "processID": return transaction.processID
            case "storeID": return transaction.storeID
            case "timestamp": return transaction.timestamp
            case "transactionNumber": return transaction.transactionNumber
            case "token": return transaction.token
            case "changes": return transaction.changes
            default: break
            }
        case let change as PersistentHistoryChange:
            switch key {
            case "changeID": return change.changeID
            case "changeType": return change.changeType.rawValue
            case "changedObjectID": return change.changedObjectID
            case "changedEntity", "entity": return change.changedObjectID.entity
            case "tombstone": return change.tombstone
            case "previousValues": return change.previousValues
            case "transaction": return change.transaction
            case "updatedProperties": return change.updatedProperties.map { Set($0.map(\.name)) }
            default: break
            }
        case let entity as EntityDescription where key == "name":
            return entity.entityName
        default:
            return try FetchPredicate.value(of: object, forKey: key)
        }
        throw CoreDataError(.keyValueValidation, "\(key) is not a key of \(type(of: object))", key: key)
    }
}
