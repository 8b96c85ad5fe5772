import Foundation
import Strata

/// `strata-graph-probe <store> batch-requests <seed> <groups>`: opens the store durable and, for
/// each of `groups` groups tagged `b<seed>.<n>`, runs three batch requests on employees: a batch
/// insert of ``batchRequestGroupSize`` employees with the notes `<tag> inserted`, a batch update
/// of those notes to `<tag> updated`, and a batch delete of the updated ones. Before each request
/// it prints `begin <kind> <tag>` and after it returns `done <kind> <tag>` (kind: insert, update,
/// delete), each line with one write, so that a test killing the process knows which requests
/// were acknowledged and which may be half-way.
func runBatchRequests(store url: URL, seed: Int, groups: Int) throws -> Never {
    let container = try openDurableContainer(at: url)
    let context = container.newBackgroundContext()
    func announce(_ line: String) { FileHandle.standardOutput.write(Data("\(line)\n".utf8)) }
    for group in 0..<groups {
        let tag = "b\(seed).\(group)"
        let insert = BatchInsertRequest(
            entityName: "Employee",
            objects: (0..<batchRequestGroupSize).map { index in
                ["name": "\(tag)-\(index)", "salary": Int64(index), "notes": "\(tag) inserted"]
            })
        let update = BatchUpdateRequest(entityName: "Employee")
        update.predicate = FetchPredicate(key: "notes", .equalTo, "\(tag) inserted")
        update.propertiesToUpdate = ["notes": FetchExpression.constant("\(tag) updated")]
        let fetch = FetchRequest<FetchRequestResult>(entityName: "Employee")
        fetch.predicate = FetchPredicate(key: "notes", .equalTo, "\(tag) updated")
        let delete = BatchDeleteRequest(fetchRequest: fetch)
        let requests: [(String, PersistentStoreRequest)] = [("insert", insert), ("update", update), ("delete", delete)]
        for (kind, request) in requests {
            announce("begin \(kind) \(tag)")
            _ = try context.performAndWait { try context.execute(request) }
            announce("done \(kind) \(tag)")
        }
    }
    try container.persistentStoreCoordinator.persistentStores.forEach {
        try container.persistentStoreCoordinator.remove($0)
    }
    exit(0)
}

/// Employees each batch insert of ``runBatchRequests(store:seed:groups:)`` inserts.
let batchRequestGroupSize = 200
