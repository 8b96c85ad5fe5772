import BenchSupport
import Foundation
import GRDB

/// W9 against SQLite: the trigger-maintained change table of ``SQLiteChangeLog``, its fetch after a
/// change id, and its replay into the replica's database (which logs its own changes too, as
/// Strata's replica keeps its own history).
extension SQLiteRecordEngine: HistoryEngine {
    func startTrackingHistory() throws {
        try SQLiteChangeLog.install(on: db)
    }

    func currentHistoryPosition() throws -> Int64 {
        try db.read { db in try SQLiteChangeLog.lastPosition(db) }
    }

    func fetchHistory(after position: Int64) throws -> (transactions: Int, changes: Int) {
        let transactions = try db.read { db in try SQLiteChangeLog.transactions(db, after: position) }
        return (transactions.count, transactions.reduce(0) { $0 + $1.changes.count })
    }

    func seedReplica(_ replica: SQLiteRecordEngine, through position: Int64) throws {
        _ = try SQLiteChangeLog.replay(from: db, named: database.url.path, into: replica.db, through: position)
    }

    func replayHistory(into replica: SQLiteRecordEngine) throws -> Int {
        try SQLiteChangeLog.replay(from: db, named: database.url.path, into: replica.db)
    }

    func salarySum() throws -> Int64 {
        try db.read { db in try Int64.fetchOne(db, sql: "SELECT COALESCE(SUM(salary), 0) FROM employee") ?? 0 }
    }
}
