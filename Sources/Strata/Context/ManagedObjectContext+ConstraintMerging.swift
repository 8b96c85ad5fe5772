import OrderedCollections

extension ManagedObjectContext {
    /// Merges `object` (inserted) into `kept`, the object a uniqueness conflict keeps, then
    /// deletes `object`. Its relationships are detached from it and, as `policy` takes them,
    /// moved to `kept`, so nothing points at the deleted object.
    ///
    /// What `kept` takes: ``MergePolicyType/mergeByPropertyObjectTrumpMergePolicyType`` the
    /// properties `object` set (to-many relationships are added to); `overwriteMergePolicyType`
    /// every property, replacing to-many relationships; `mergeByPropertyStoreTrumpMergePolicyType`
    /// the attributes and to-one relationships `kept` has no value for (to-many relationships are
    /// added to); `rollbackMergePolicyType` nothing.
    ///
    /// - Throws: ``CoreDataError`` when an object involved cannot be loaded.
    func merge(_ object: ManagedObject, into kept: ManagedObject, policy: MergePolicyType) throws {
        try kept.fireFault()
        for (slot, property) in object.runtime.properties.enumerated() where !property.isTransient {
            try object.loadToMany(slot)
            let value = object.values[slot]
            guard let keptSlot = kept.runtime.slots[property.name] else { continue }
            try kept.loadToMany(keptSlot)
            let keptValue = kept.values[keptSlot]
            let take: Bool
            switch policy {
            case .overwriteMergePolicyType: take = true
            case .mergeByPropertyObjectTrumpMergePolicyType: take = object.changedSlots.contains(slot)
            case .mergeByPropertyStoreTrumpMergePolicyType:
                take = keptValue == nil || property is RelationshipDescription && value is OrderedSet<ManagedObjectID>
            case .errorMergePolicyType, .rollbackMergePolicyType: take = false
            }
            guard let relationship = property as? RelationshipDescription else {
                if take, !FetchValue.equal(value, keptValue) {
                    kept.values[keptSlot] = value
                    kept.noteChange(keptSlot)
                }
                continue
            }
            // Detach first, so that the related objects' inverses let go of `object`.
            try object.setRelationship(nil, relationship, slot: slot)
            guard take, let keptRelationship = kept.runtime.properties[keptSlot] as? RelationshipDescription else {
                continue
            }
            if let ids = value as? OrderedSet<ManagedObjectID> {
                let base = policy == .overwriteMergePolicyType ? [] : (keptValue as? OrderedSet<ManagedObjectID> ?? [])
                let merged = base.union(ids)
                guard merged != keptValue as? OrderedSet<ManagedObjectID> else { continue }
                let objects = merged.map { self.object(with: $0) }
                try kept.setRelationship(
                    keptRelationship.isOrdered ? objects as Any : Set(objects) as Any, keptRelationship, slot: keptSlot)
            } else if let id = value as? ManagedObjectID, id != keptValue as? ManagedObjectID {
                try kept.setRelationship(self.object(with: id), keptRelationship, slot: keptSlot)
            } else if value == nil, policy == .overwriteMergePolicyType, keptValue != nil {
                try kept.setRelationship(nil, keptRelationship, slot: keptSlot)
            }
        }
        delete(object)
    }
}
