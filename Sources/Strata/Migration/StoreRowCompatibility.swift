/// Whether a model change leaves every stored row readable as it is, so that a migration only
/// rewrites the store's metadata.
enum StoreRowCompatibility {
    /// Whether the rows a store written with `source` holds are valid rows of `destination`:
    /// the engine schemas are equal, every stored entity tag stands for the entity of the same name
    /// (or the one it was renamed from), no attribute or relationship became required or
    /// narrowed its counts (stored objects might not satisfy them), and no entity gained or lost an
    /// attribute or to-one relationship on a column a sibling entity shares (stored objects would
    /// read nothing or their default there, which their rows lack, and a property added again
    /// after its removal would read the values written before: Core Data's added property is new).
    ///
    /// - Throws: ``CoreDataError`` when the source model cannot be laid out.
    static func rowsUnchanged(from source: ManagedObjectModel, to destination: ManagedObjectModel) throws -> Bool {
        let sourceMapping = try PersistentStoreCoordinator(managedObjectModel: source).mapping.get()
        let mapping = try PersistentStoreCoordinator(managedObjectModel: destination).mapping.get()
        guard sourceMapping.schema == mapping.schema else { return false }
        for (storeEntity, tags) in mapping.entitiesByTag {
            for (tag, entity) in tags {
                guard let old = sourceMapping.entitiesByTag[storeEntity]?[tag],
                    MappingModel.counterpart(of: entity.renamingIdentifier, entity.name, in: [old.name: old]) != nil
                else { return false }
                // A property removed from the entity whose column a sibling keeps: the entity's
                // rows still hold its values there, which a property added again later would read.
                if let kept = sourceMapping.layouts[old.name]?.columns,
                    old.properties.contains(where: { kept[$0.name] != nil && !$0.isTransient && !Self.keeps($0.name, in: entity) })
                {
                    return false
                }
                for property in entity.properties where !property.isTransient {
                    guard let before = old.propertiesByName[property.renamingIdentifier ?? property.name] ?? old.propertiesByName[property.name]
                    else {
                        // A new property on a column a sibling shares: the entity's rows hold nothing
                        // it may read there (no default, or values of a property removed before).
                        if mapping.layouts[entity.name]?.columns[property.name] != nil { return false }
                        continue
                    }
                    if before.isOptional && !property.isOptional { return false }
                    if let relationship = property as? RelationshipDescription, let was = before as? RelationshipDescription {
                        if relationship.minCount > was.minCount { return false }
                        if relationship.maxCount != 0 && (was.maxCount == 0 || relationship.maxCount < was.maxCount) { return false }
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

    /// Whether `entity` has a stored property named `name` or renamed from it.
    static func keeps(_ name: String, in entity: EntityDescription) -> Bool {
        entity.properties.contains { !$0.isTransient && ($0.name == name || $0.renamingIdentifier == name) }
    }
}
