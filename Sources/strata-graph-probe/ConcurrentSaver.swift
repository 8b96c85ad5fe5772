import Foundation
import Strata
import StrataSynchronization
import Synchronization

/// `strata-graph-probe <store> save-concurrently <contexts>`: opens the store durable and has
/// `contexts` background contexts, each on a thread of its own, save one new employee at a time
/// (named `w<context>-<n>`) until the process is killed. After each save returns it prints
/// `saved <name>` on a line of its own, so that a test killing the process knows every save that
/// was acknowledged; after each save of the first context, also `statistics <commits> <fsyncs>`
/// of the engine store.
func saveConcurrently(store url: URL, contexts count: Int) throws -> Never {
    let container = try openDurableContainer(at: url)
    let output = Lock(())
    for worker in 0..<count {
        let context = container.newBackgroundContext()
        Thread.detachNewThread {
            var number = 0
            while true {
                let name = "w\(worker)-\(number)"
                do {
                    try context.performAndWait {
                        let employee = EntityDescription.insertNewObject(forEntityName: "Employee", into: context)
                        employee.setValue(name, forKey: "name")
                        employee.setValue(Int64(number), forKey: "salary")
                        try context.save()
                        context.reset()
                    }
                } catch {
                    fail("saving \(name): \(error)")
                }
                output.withLock { _ in
                    FileHandle.standardOutput.write(Data("saved \(name)\n".utf8))
                    if worker == 0,
                        let statistics = container.persistentStoreCoordinator.persistentStores.first?.engineStore?
                            .statistics
                    {
                        FileHandle.standardOutput.write(
                            Data("statistics \(statistics.commits) \(statistics.fsyncs)\n".utf8))
                    }
                }
                number += 1
            }
        }
    }
    while true { sleep(60) }
}

/// A container of the Department/Employee model over the store at `url`, opened durable.
func openDurableContainer(at url: URL) throws -> PersistentContainer {
    let container = PersistentContainer(name: "Company", managedObjectModel: makeModel())
    let description = PersistentStoreDescription(url: url)
    description.durability = .durable
    container.persistentStoreDescriptions = [description]
    let failure = Lock<(any Error)?>(nil)
    container.loadPersistentStores { _, error in failure.withLock { $0 = error } }
    if let error = failure.withLock({ $0 }) { throw error }
    return container
}
