/// The objects of a batched fetch (Core Data's batched `NSArray` from a request with a
/// `fetchBatchSize`): it holds the matching object IDs and realizes the objects of a batch of
/// ``batchSize`` when one of them is first accessed, reading the batch's rows together.
///
/// Realized objects stay held by the collection. Use it on its context's queue; not `Sendable`.
public struct FetchedResults<T: ManagedObject>: RandomAccessCollection {
    /// One result before it is accessed.
    enum Entry {
        /// An object the fetch had at hand (inserted or changed in the context).
        case object(ManagedObject)
        /// A stored object, realized with its batch.
        case id(ManagedObjectID)
    }

    /// The results and their realized objects; a class so that accessing through a `let`
    /// collection can realize batches.
    private final class Storage {
        let elements: [Entry]
        var objects: [T?]
        let batchSize: Int
        weak var context: ManagedObjectContext?

        init(elements: [Entry], batchSize: Int, context: ManagedObjectContext) {
            self.elements = elements
            self.objects = Array(repeating: nil, count: elements.count)
            self.batchSize = batchSize > 0 ? batchSize : Swift.max(elements.count, 1)
            self.context = context
        }
    }

    private let storage: Storage

    /// Creates the results of a fetch.
    init(elements: [Entry], batchSize: Int, context: ManagedObjectContext) {
        storage = Storage(elements: elements, batchSize: batchSize, context: context)
    }

    /// The number of objects a batch realizes.
    public var batchSize: Int { storage.batchSize }

    /// The first position.
    public var startIndex: Int { 0 }
    /// One past the last position.
    public var endIndex: Int { storage.elements.count }

    /// The IDs of the results, in order, without realizing any object.
    public var objectIDs: [ManagedObjectID] {
        storage.elements.map { element in
            switch element {
            case .object(let object): return object.objectID
            case .id(let id): return id
            }
        }
    }

    /// Whether the object at `position` was realized (its batch accessed).
    public func isRealized(at position: Int) -> Bool {
        storage.objects[position] != nil
    }

    /// The object at `position`, realizing its batch on first access.
    ///
    /// Should a batch's rows fail to read, its objects come back as faults, which report the
    /// failure when they fire.
    public subscript(position: Int) -> T {
        if let object = storage.objects[position] { return object }
        let batch = position / storage.batchSize
        try? realize(batch: batch)
        if let object = storage.objects[position] { return object }
        // Not realized: the context is gone or the read failed; hand out a fault.
        switch storage.elements[position] {
        case .object(let object): return object as! T
        case .id(let id):
            guard let context = storage.context else {
                preconditionFailure("the context of the fetched results is gone")
            }
            return context.object(with: id) as! T
        }
    }

    /// Realizes every batch.
    ///
    /// - Throws: ``CoreDataError`` when a read fails.
    func realizeAll() throws {
        var batch = 0
        while batch * storage.batchSize < storage.elements.count {
            try realize(batch: batch)
            batch += 1
        }
    }

    /// Realizes the objects of batch `batch` with one batched row read.
    private func realize(batch: Int) throws {
        guard let context = storage.context else { return }
        let range = (batch * storage.batchSize)..<Swift.min((batch + 1) * storage.batchSize, storage.elements.count)
        var ids: [ManagedObjectID] = []
        var positions: [Int] = []
        for position in range where storage.objects[position] == nil {
            switch storage.elements[position] {
            case .object(let object): storage.objects[position] = object as? T
            case .id(let id):
                ids.append(id)
                positions.append(position)
            }
        }
        guard !ids.isEmpty else { return }
        for (position, object) in zip(positions, try context.realizeObjects(ids)) {
            storage.objects[position] = object as? T
        }
    }
}
