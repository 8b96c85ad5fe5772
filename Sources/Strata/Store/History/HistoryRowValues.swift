import Foundation
internal import StrataStore

/// Turns stored rows of one entity kept by the history into values of the object graph, by name,
/// through ``RowDecoding``: the entity's attributes and to-one relationships with their columns,
/// worked out once, so that each row costs no property cast and no column lookup by name.
struct HistoryRowValues {
    /// One property whose value a row holds.
    private struct Slot {
        /// The property's name, the key of its value.
        let name: String
        /// Its column in the rows.
        let column: Int
        /// The attribute, or `nil` for a to-one relationship.
        let attribute: AttributeDescription?
        /// The destination of a to-one relationship.
        let destination: EntityDescription?
    }

    /// The attributes and to-one relationships stored in a column, in property order.
    private let slots: [Slot]
    /// The store of related objects.
    private let storeIdentifier: String
    private let coordinator: PersistentStoreCoordinator

    /// The values of rows of `entity`, stored as `layout` says.
    ///
    /// - Parameter storeIdentifier: the store of related objects.
    init(
        entity: EntityDescription, layout: EntityLayout, storeIdentifier: String,
        coordinator: PersistentStoreCoordinator
    ) {
        var slots: [Slot] = []
        for property in entity.properties {
            guard let column = layout.columns[property.name] else { continue }
            if let attribute = property as? AttributeDescription {
                slots.append(Slot(name: property.name, column: column, attribute: attribute, destination: nil))
            } else if let destination = (property as? RelationshipDescription)?.destinationEntity {
                slots.append(Slot(name: property.name, column: column, attribute: nil, destination: destination))
            }
        }
        self.slots = slots
        self.storeIdentifier = storeIdentifier
        self.coordinator = coordinator
    }

    /// The values of the attributes and to-one relationships in `row`, by name: `NSNull` for
    /// `nil`, related objects as ``ManagedObjectID``s.
    ///
    /// - Parameter columns: only properties stored in these columns (a handful); every one when `nil`.
    func values(of row: Row, columns: [Int]? = nil) throws -> [String: Any] {
        var values: [String: Any] = [:]
        values.reserveCapacity(columns?.count ?? slots.count)
        for slot in slots where slot.column < row.count && columns?.contains(slot.column) ?? true {
            let value: Any?
            if let attribute = slot.attribute {
                value = try RowDecoding.attributeValue(row[slot.column], for: attribute, coordinator: coordinator)
            } else {
                value = slot.destination.flatMap {
                    RowDecoding.toOneValue(row[slot.column], destination: $0, storeIdentifier: storeIdentifier)
                }
            }
            values[slot.name] = value ?? NSNull()
        }
        return values
    }
}
