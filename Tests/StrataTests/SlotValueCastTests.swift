import Foundation
import OrderedCollections
import Testing
@testable import Strata

/// `SlotValueCast.cast` gives what `as?` gives, whether the value is exactly of the type asked
/// for (taken by comparing type metadata) or not (cast by `as?`).
@Suite struct SlotValueCastTests {
    private let entity = EntityDescription(name: "Thing")

    @Test func aValueOfExactlyTheTypeIsTakenAsItIs() {
        let id = ManagedObjectID(temporaryFor: entity)
        let ids: OrderedSet<ManagedObjectID> = [id, ManagedObjectID(temporaryFor: entity)]
        #expect(SlotValueCast.cast(id as Any?, to: ManagedObjectID.self) === id)
        #expect(SlotValueCast.cast(ids as Any?, to: OrderedSet<ManagedObjectID>.self) == ids)
        #expect(SlotValueCast.cast(nil, to: ManagedObjectID.self) == nil)
    }

    @Test func anyOtherValueIsCastAsAsCastsIt() {
        let id = ManagedObjectID(temporaryFor: entity)
        let ids: OrderedSet<ManagedObjectID> = [id]
        #expect(SlotValueCast.cast(ids as Any?, to: ManagedObjectID.self) == nil)
        #expect(SlotValueCast.cast(id as Any?, to: OrderedSet<ManagedObjectID>.self) == nil)
        #expect(SlotValueCast.cast("text" as Any?, to: ManagedObjectID.self) == nil)
        // Not exactly the type asked for, and still cast: an ID to `AnyObject`, an optional
        // held in the `Any` to what it wraps.
        #expect(SlotValueCast.cast(id as Any?, to: AnyObject.self) === id)
        #expect(SlotValueCast.cast(Optional(id) as Any, to: ManagedObjectID.self) === id)
    }
}
