/// Whether a model change leaves every stored row readable as it is, so that a migration only
/// rewrites the store's metadata.
enum StoreRowCompatibility {
    /// Whether the rows a store written with `source` holds are valid rows of `destination`:
    /// the engine schemas are equal, every stored entity tag stands for the entity of the same name
    /// (or the one it was renamed from), no attribute or relationship became required or
    /// narrowed its counts (stored objects might not satisfy them), and no entity gained an attribute
    /// or to-one relationship on a column a sibling entity shares: the entity's rows hold no default
    /// there, and may hold the values of a property of that name removed before (a removal leaves
    /// them in place), which a property added again must not read (Core Data's is a new property).
    ///
    /// - Throws: ``CoreDataError`` when the source model cannot be laid out.
    static func rowsUnchanged(from source: ManagedObjectModel, to destination: ManagedObjectModel) throws -> Bool {
        let sourceMapping = try PersistentStoreCoordinator(managedObjectModel: source).mapping.get()
        let mapping = try PersistentStoreCoordinator(managedObjectModel: destination).mapping.get()
        guard sourceMapping.hasSameSchema(as: mapping) else { return false }
        for (storeEntity, tags) in mapping.entitiesByTag {
            for (tag, entity) in tags {
                guard let old = sourceMapping.entitiesByTag[storeEntity]?[tag],
                    MappingModel.counterpart(
                        of: entity.renamingIdentifier, entity.entityName, in: [old.entityName: old]) != nil
                else { return false }
                for property in entity.properties where !property.isTransient {
                    guard
                        let before = old.propertiesByName[property.renamingIdentifier ?? property.name]
                            ?? old.propertiesByName[property.name]
                    else {
                        // A new property on a column a sibling shares: the entity's rows hold nothing
                        // it may read there (no default, or values of a property removed before).
                        if mapping.layouts[entity.entityName]?.columns[property.name] != nil { return false }
                        continue
                    }
                    if before.isOptional && !property.isOptional { return false }
                    if let relationship = property as? RelationshipDescription,
                        let was = before as? RelationshipDescription
                    {
                        if relationship.minCount > was.minCount { return false }
                        if relationship.maxCount != 0 && (was.maxCount == 0 || relationship.maxCount < was.maxCount) {
                            return false
                        }
                    }
                    if let attribute = property as? AttributeDescription, let was = before as? AttributeDescription,
                        attribute.attributeType != was.attributeType
                    {
                        return false
                    }
                }
            }
        }
        return true
    }
}
