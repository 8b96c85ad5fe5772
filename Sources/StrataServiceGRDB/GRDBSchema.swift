import GRDB

/// The service's tables on SQLite: the reference model, and the change table that triggers
/// fill for the change feed.
///
/// Every write transaction of ``GRDBBackend`` first inserts a row in `feed_transaction`; the
/// triggers on `department` and `employee` record each inserted, updated and deleted row in
/// `feed_change` under the latest `feed_transaction`, so a feed reads what one transaction
/// changed, and a rolled-back write leaves nothing. `feed_floor` holds the token up to which the
/// change table's history was deleted.
enum GRDBSchema {
    /// The migrator that creates the tables, indexes and triggers.
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE department (
                        id INTEGER PRIMARY KEY AUTOINCREMENT,
                        name TEXT NOT NULL,
                        budget DOUBLE NOT NULL);
                    CREATE INDEX department_name ON department(name);
                    CREATE TABLE employee (
                        id INTEGER PRIMARY KEY AUTOINCREMENT,
                        name TEXT NOT NULL,
                        salary INTEGER NOT NULL,
                        hired DATETIME NOT NULL,
                        active BOOLEAN NOT NULL,
                        notes TEXT NOT NULL,
                        photo BLOB,
                        department INTEGER REFERENCES department(id) ON DELETE CASCADE);
                    CREATE INDEX employee_salary ON employee(salary);
                    CREATE INDEX employee_department ON employee(department);
                    CREATE TABLE feed_transaction (
                        id INTEGER PRIMARY KEY AUTOINCREMENT,
                        timestamp DATETIME NOT NULL);
                    CREATE TABLE feed_change (
                        id INTEGER PRIMARY KEY AUTOINCREMENT,
                        tx INTEGER NOT NULL REFERENCES feed_transaction(id),
                        entity TEXT NOT NULL,
                        row INTEGER NOT NULL,
                        type TEXT NOT NULL);
                    CREATE INDEX feed_change_tx ON feed_change(tx);
                    CREATE TABLE feed_consumer (
                        name TEXT PRIMARY KEY,
                        token INTEGER NOT NULL);
                    """)
            for (table, entity) in [("department", "Department"), ("employee", "Employee")] {
                for (event, type, row) in [("INSERT", "insert", "NEW"), ("UPDATE", "update", "NEW"), ("DELETE", "delete", "OLD")] {
                    try db.execute(
                        sql: """
                            CREATE TRIGGER \(table)_\(type) AFTER \(event) ON \(table) BEGIN
                                INSERT INTO feed_change (tx, entity, row, type)
                                VALUES ((SELECT MAX(id) FROM feed_transaction), '\(entity)', \(row).id, '\(type)');
                            END
                            """)
                }
            }
        }
        migrator.registerMigration("v2") { db in
            // The feed's oldest token: the change table holds the transactions after it.
            try db.execute(
                sql: """
                    CREATE TABLE feed_floor (token INTEGER NOT NULL);
                    INSERT INTO feed_floor (token) VALUES (0);
                    """)
        }
        return migrator
    }
}
