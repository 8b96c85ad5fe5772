import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// The store kinds the row-store contract runs against.
enum ContractStoreKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
    /// A Strata store directory on disk (the engine store).
    case engine
    /// Core Data's in-memory store type.
    case inMemory

    var testDescription: String { rawValue }

    /// A container on a store of this kind named `name` (the engine store is in `folder`).
    func container(
        named name: String, in folder: TemporaryDirectory, model: ManagedObjectModel
    ) throws -> PersistentContainer {
        guard self == .inMemory else { return try GraphModel.container(at: folder.store(name), model: model) }
        let container = PersistentContainer(name: name, managedObjectModel: model)
        let description = PersistentStoreDescription()
        description.type = InMemoryStoreType
        container.persistentStoreDescriptions = [description]
        let failure = LockedError()
        container.loadPersistentStores { _, error in failure.set(error) }
        if let error = failure.get() { throw error }
        return container
    }
}

/// A container on one store of a ``ContractStoreKind``, with the contract's model:
/// `Author` (unique `name`, `age`) —< `Book.author` (to-one, inverse to-many `books`),
/// `Book` >—< `Tag` (many-to-many), `Shelf.books` ordered to-many with the inverse `Book.shelf`.
private final class ContractStore {
    let kind: ContractStoreKind
    let folder = TemporaryDirectory()
    let model = ContractStore.makeModel()
    private(set) var container: PersistentContainer

    init(_ kind: ContractStoreKind) throws {
        self.kind = kind
        container = try kind.container(named: "Contract", in: folder, model: model)
    }

    deinit { try? container.close() }

    /// Reads the store again: the engine store is closed and opened from disk; the in-memory
    /// store keeps its container (nothing outlives it), so a new context reads it afresh.
    func reopen() throws {
        guard kind == .engine else { return }
        try container.close()
        container = try kind.container(named: "Contract", in: folder, model: model)
    }

    /// Runs `body` on a new background context.
    func withContext<T>(_ body: (ManagedObjectContext) throws -> T) throws -> T {
        let context = container.newBackgroundContext()
        return try context.performAndWait { try body(context) }
    }

    private static func makeModel() -> ManagedObjectModel {
        let author = ModelBuilder.entity(
            "Author",
            [
                ModelBuilder.attribute("name", .string),
                ModelBuilder.attribute("age", .integer64, defaultValue: Int64(0)),
            ])
        author.uniquenessConstraints = [["name"]]
        let book = ModelBuilder.entity("Book", [ModelBuilder.attribute("name", .string)])
        let tag = ModelBuilder.entity("Tag", [ModelBuilder.attribute("name", .string)])
        let shelf = ModelBuilder.entity("Shelf", [ModelBuilder.attribute("name", .string)])
        ModelBuilder.inverse(
            ModelBuilder.relationship("books", from: author, to: book, toMany: true),
            ModelBuilder.relationship("author", from: book, to: author))
        ModelBuilder.inverse(
            ModelBuilder.relationship("tags", from: book, to: tag, toMany: true),
            ModelBuilder.relationship("books", from: tag, to: book, toMany: true))
        ModelBuilder.inverse(
            ModelBuilder.relationship("books", from: shelf, to: book, toMany: true, isOrdered: true),
            ModelBuilder.relationship("shelf", from: book, to: shelf))
        return ModelBuilder.model([author, book, tag, shelf])
    }
}

/// The row-store contract: the same operations through the Core Data API give the same results
/// on the engine store and on the in-memory store (and, on disk, after reopening).
@Suite struct RowStoreContractTests {
    private typealias R = RelationshipTests

    /// The names of every object of `entity`, sorted.
    private static func names(_ entity: String, in context: ManagedObjectContext) throws -> [String] {
        let request = FetchRequest<ManagedObject>(entityName: entity)
        request.sortDescriptors = [FetchSortDescriptor(key: "name")]
        return try context.fetch(request).map { $0.value(forKey: "name") as! String }
    }

    /// `name: age` of every author, sorted by name.
    private static func ages(in context: ManagedObjectContext) throws -> [String] {
        let request = FetchRequest<ManagedObject>(entityName: "Author")
        request.sortDescriptors = [FetchSortDescriptor(key: "name")]
        return try context.fetch(request).map {
            "\($0.value(forKey: "name") as! String): \($0.value(forKey: "age") as! Int64)"
        }
    }

    @Test(arguments: ContractStoreKind.allCases)
    func insertsUpdatesAndDeletesRoundTrip(kind: ContractStoreKind) throws {
        let store = try ContractStore(kind)
        let kept = try store.withContext { context throws in
            let authors = try ["ann", "bob", "cy", "di"].enumerated().map { index, name in
                let author = try R.make("Author", name, in: context)
                author.setValue(Int64(30 + index), forKey: "age")
                return author
            }
            try context.obtainPermanentIDs(for: [authors[0]])
            let early = authors[0].objectID
            #expect(!early.isTemporaryID)
            try context.save()
            #expect(authors[0].objectID == early, "a permanent ID obtained before the save is the one saved")
            #expect(authors.allSatisfy { !$0.objectID.isTemporaryID })
            return early
        }
        try store.reopen()
        try store.withContext { context throws in
            #expect(try Self.ages(in: context) == ["ann: 30", "bob: 31", "cy: 32", "di: 33"])
            #expect(try context.existingObject(with: kept).value(forKey: "name") as? String == "ann")
            try R.fetch("Author", "bob", in: context).setValue(Int64(41), forKey: "age")
            try R.fetch("Author", "cy", in: context).setValue("cyd", forKey: "name")
            context.delete(try R.fetch("Author", "di", in: context))
            try context.save()
        }
        try store.reopen()
        try store.withContext { context throws in
            #expect(try Self.ages(in: context) == ["ann: 30", "bob: 41", "cyd: 32"])
            #expect(try context.count(for: FetchRequest<ManagedObject>(entityName: "Author")) == 3)
        }
    }

    @Test(arguments: ContractStoreKind.allCases)
    func relationshipsOfEveryKindRoundTrip(kind: ContractStoreKind) throws {
        let store = try ContractStore(kind)
        try store.withContext { context throws in
            let ann = try R.make("Author", "ann", in: context)
            let books = try ["b0", "b1", "b2", "b3"].map { try R.make("Book", $0, in: context) }
            let tags = try ["t0", "t1"].map { try R.make("Tag", $0, in: context) }
            let shelf = try R.make("Shelf", "top", in: context)
            ann.setValue(Set(books[0...2]), forKey: "books")
            books[0].setValue(Set(tags), forKey: "tags")
            books[1].setValue(Set([tags[1]]), forKey: "tags")
            shelf.setValue([books[2], books[0], books[3]], forKey: "books")
            try context.save()
        }
        try store.reopen()
        try store.withContext { context throws in
            #expect(try R.names(R.fetch("Author", "ann", in: context), "books") == ["b0", "b1", "b2"])
            #expect(try R.names(R.fetch("Book", "b1", in: context), "author") == ["ann"])
            #expect(try R.names(R.fetch("Book", "b3", in: context), "author") == [])
            #expect(try R.names(R.fetch("Book", "b0", in: context), "tags") == ["t0", "t1"])
            #expect(try R.names(R.fetch("Tag", "t1", in: context), "books") == ["b0", "b1"])
            #expect(try R.names(R.fetch("Shelf", "top", in: context), "books") == ["b2", "b0", "b3"])
            #expect(try R.names(R.fetch("Book", "b3", in: context), "shelf") == ["top"])
            // Move a book, drop a pair, reorder the shelf, delete a tag (its pairs go with it).
            try R.fetch("Book", "b3", in: context).setValue(try R.fetch("Author", "ann", in: context), forKey: "author")
            try R.fetch("Book", "b1", in: context).setValue(nil, forKey: "author")
            try R.fetch("Book", "b0", in: context).mutableSetValue(forKey: "tags").remove(
                try R.fetch("Tag", "t1", in: context))
            let shelved = try R.fetch("Shelf", "top", in: context).mutableOrderedSetValue(forKey: "books")
            shelved.remove(try R.fetch("Book", "b2", in: context))
            shelved.insert(try R.fetch("Book", "b1", in: context), at: 0)
            let b3 = try R.fetch("Book", "b3", in: context)
            shelved.remove(b3)
            shelved.insert(b3, at: 1)
            context.delete(try R.fetch("Tag", "t0", in: context))
            try context.save()
        }
        try store.reopen()
        try store.withContext { context throws in
            #expect(try R.names(R.fetch("Author", "ann", in: context), "books") == ["b0", "b2", "b3"])
            #expect(try R.names(R.fetch("Book", "b1", in: context), "author") == [])
            #expect(try R.names(R.fetch("Book", "b0", in: context), "tags") == [])
            #expect(try R.names(R.fetch("Book", "b1", in: context), "tags") == ["t1"])
            #expect(try R.names(R.fetch("Tag", "t1", in: context), "books") == ["b1"])
            #expect(try Self.names("Tag", in: context) == ["t1"])
            #expect(try R.names(R.fetch("Shelf", "top", in: context), "books") == ["b1", "b3", "b0"])
            #expect(try R.names(R.fetch("Book", "b2", in: context), "shelf") == [])
            // Deleting the owner of pairs deletes its join rows; nullify leaves the others.
            context.delete(try R.fetch("Shelf", "top", in: context))
            context.delete(try R.fetch("Author", "ann", in: context))
            try context.save()
        }
        try store.reopen()
        try store.withContext { context throws in
            #expect(try Self.names("Book", in: context) == ["b0", "b1", "b2", "b3"])
            for name in ["b0", "b1", "b2", "b3"] {
                let book = try R.fetch("Book", name, in: context)
                #expect(try R.names(book, "author") == [] && R.names(book, "shelf") == [])
            }
            #expect(try R.names(R.fetch("Tag", "t1", in: context), "books") == ["b1"])
        }
    }

    @Test(arguments: ContractStoreKind.allCases)
    func uniquenessConflictsFailOrMergeByPolicy(kind: ContractStoreKind) throws {
        let store = try ContractStore(kind)
        try store.withContext { context throws in
            try R.make("Author", "ann", in: context).setValue(Int64(30), forKey: "age")
            try context.save()
        }
        try store.withContext { context throws in
            try R.make("Author", "ann", in: context).setValue(Int64(50), forKey: "age")
            let error = #expect(throws: CoreDataError.self) { try context.save() }
            #expect(error?.code == .managedObjectConstraintMerge)
            #expect(context.hasChanges, "the failed save keeps the changes")
            // Two new objects of one save with the same values conflict with each other too.
            context.rollback()
            _ = try R.make("Author", "eve", in: context)
            _ = try R.make("Author", "eve", in: context)
            #expect(throws: CoreDataError.self) { try context.save() }
        }
        try store.reopen()
        try store.withContext { context throws in
            #expect(try Self.ages(in: context) == ["ann: 30"], "a refused save writes nothing")
            context.mergePolicy = .mergeByPropertyObjectTrump
            try R.make("Author", "ann", in: context).setValue(Int64(50), forKey: "age")
            try context.save()
        }
        try store.reopen()
        try store.withContext { context throws in
            #expect(try Self.ages(in: context) == ["ann: 50"])
        }
    }

    @Test(arguments: ContractStoreKind.allCases)
    func optimisticLockingConflictsFailOrMergeByPolicy(kind: ContractStoreKind) throws {
        let store = try ContractStore(kind)
        let id = try store.withContext { context throws in
            let ann = try R.make("Author", "ann", in: context)
            ann.setValue(Int64(30), forKey: "age")
            try context.save()
            return ann.objectID
        }
        let first = store.container.newBackgroundContext()
        let second = store.container.newBackgroundContext()
        let copy1 = try first.performAndWait { try first.existingObject(with: id) }
        let copy2 = try second.performAndWait { try second.existingObject(with: id) }
        try first.performAndWait {
            copy1.setValue(Int64(31), forKey: "age")
            try first.save()
        }
        try second.performAndWait {
            copy2.setValue("anne", forKey: "name")
            let error = #expect(throws: CoreDataError.self) { try second.save() }
            #expect(error?.code == .managedObjectMerge)
            #expect(error?.detailedErrors.map(\.objectID) == [id])
            second.mergePolicy = .mergeByPropertyObjectTrump
            try second.save()
        }
        try store.reopen()
        try store.withContext { context throws in
            #expect(try Self.ages(in: context) == ["anne: 31"], "each side's change is kept")
        }
    }

    @Test(arguments: ContractStoreKind.allCases)
    func fetchesFilterSortPageAndCount(kind: ContractStoreKind) throws {
        let store = try ContractStore(kind)
        try store.withContext { context throws in
            for index in 0..<20 {
                try R.make("Author", String(format: "a%02d", index), in: context).setValue(
                    Int64(index % 7), forKey: "age")
            }
            try context.save()
        }
        try store.reopen()
        try store.withContext { context throws in
            let request = FetchRequest<ManagedObject>(entityName: "Author")
            request.predicate = try FetchPredicate(checkedFormat: "age >= 3")
            request.sortDescriptors = [
                FetchSortDescriptor(key: "age", ascending: false), FetchSortDescriptor(key: "name"),
            ]
            // Ages 6: a06 a13; 5: a05 a12 a19; 4: a04 a11 a18; 3: a03 a10 a17.
            #expect(try context.count(for: request) == 11)
            request.fetchOffset = 2
            request.fetchLimit = 4
            #expect(
                try context.fetch(request).map { $0.value(forKey: "name") as! String } == ["a05", "a12", "a19", "a04"])

            let ids = FetchRequest<ManagedObjectID>(entityName: "Author")
            ids.resultType = .managedObjectIDResultType
            ids.predicate = FetchPredicate(key: "age", .equalTo, Int64(6))
            #expect(
                try Set(context.fetch(ids))
                    == Set([
                        R.fetch("Author", "a06", in: context).objectID, R.fetch("Author", "a13", in: context).objectID,
                    ]))

            let counting = FetchRequest<Int>(entityName: "Author")
            counting.resultType = .countResultType
            counting.predicate = try FetchPredicate(checkedFormat: "name BEGINSWITH 'a1'")
            #expect(try context.fetch(counting) == [10])

            let dictionaries = FetchRequest<[String: Any]>(entityName: "Author")
            dictionaries.resultType = .dictionaryResultType
            dictionaries.propertiesToFetch = ["name", "age"]
            dictionaries.predicate = try FetchPredicate(checkedFormat: "age == 0")
            dictionaries.sortDescriptors = [FetchSortDescriptor(key: "name", ascending: false)]
            let rows = try context.fetch(dictionaries)
            #expect(rows.map { $0["name"] as? String } == ["a14", "a07", "a00"])
            #expect(rows.allSatisfy { $0["age"] as? Int64 == 0 })
        }
    }
}
