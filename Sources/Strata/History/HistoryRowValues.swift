import Foundation
import StrataStore

/// Turns stored rows kept by the history into values of the object graph.
enum HistoryRowValues {
    /// The values of the attributes and to-one relationships of `entity` in `row`, by name:
    /// `NSNull` for `nil`, related objects as ``ManagedObjectID``s.
    ///
    /// - Parameters:
    ///   - columns: only properties stored in these columns; every one when `nil`.
    ///   - storeIdentifier: the store of related objects.
    static func values(
        of row: Row, entity: EntityDescription, layout: EntityLayout, columns: Set<Int>? = nil, storeIdentifier: String,
        coordinator: PersistentStoreCoordinator
    ) throws -> [String: Any] {
        var values: [String: Any] = [:]
        for property in entity.properties {
            guard let column = layout.columns[property.name], columns?.contains(column) ?? true, column < row.count else { continue }
            if let attribute = property as? AttributeDescription {
                values[property.name] = try ValueConversion.objectValue(row[column], for: attribute, coordinator: coordinator) ?? NSNull()
            } else if let destination = (property as? RelationshipDescription)?.destinationEntity {
                if case .reference(let key) = row[column] {
                    values[property.name] = ManagedObjectID(entity: destination, storeIdentifier: storeIdentifier, primaryKey: key)
                } else {
                    values[property.name] = NSNull()
                }
            }
        }
        return values
    }
}
