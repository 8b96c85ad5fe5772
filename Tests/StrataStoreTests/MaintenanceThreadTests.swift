import Foundation
import StrataTestSupport
import Testing
@testable import StrataStore

/// The store's maintenance thread lives as long as its store.
@Suite struct MaintenanceThreadTests {
    /// A store released without `close()` (as a crash-like test or a careless caller does) ends
    /// its maintenance thread, which would otherwise wake every second for the rest of the
    /// process; and the store opens again at once.
    @Test func aStoreReleasedWithoutCloseEndsItsMaintenanceThread() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        var configuration = TestSchema.configuration()
        configuration.backgroundMaintenance = true
        var store: Store? = try Store.open(at: url, schema: TestSchema.schema, configuration: configuration)
        var transaction = Transaction()
        transaction.insert(TestSchema.department, key: 1, row: Row([.string("Lab"), .double(1)]))
        try store!.commit(transaction)
        let thread = store!.maintenance
        #expect(!thread.hasEnded)
        store = nil

        let deadline = ContinuousClock.now + .seconds(10)
        while !thread.hasEnded && ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.01) }
        #expect(thread.hasEnded)
        let reopened = try Store.open(at: url, schema: TestSchema.schema, configuration: configuration)
        #expect(reopened.count(TestSchema.department) == 1)
        try reopened.close()
    }
}
