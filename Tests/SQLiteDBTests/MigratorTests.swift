import Foundation
import Testing
import TestSupport
@testable import NTSQLiteDB

@Suite struct MigratorTests {
    private func temporaryPath() -> String {
        testDirectory("migrate").appendingPathExtension("sqlite").path
    }

    private let steps = [
        Migration(version: 1, name: "people", sql: "CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT NOT NULL)"),
        Migration(version: 2, name: "ages", sql: "ALTER TABLE people ADD COLUMN age INTEGER"),
        Migration(version: 3, name: "index", sql: "CREATE INDEX people_by_name ON people (name)"),
    ]

    @Test func eachMigrationIsAppliedOnceInOrder() throws {
        let database = try Database(path: temporaryPath())
        #expect(try Migrator.migrate(database, steps).map(\.version) == [1, 2, 3])
        #expect(try Migrator.migrate(database, steps).isEmpty) // nothing twice
        #expect(try Migrator.appliedVersions(database) == [1, 2, 3])
        try database.run("INSERT INTO people (name, age) VALUES (?, ?)", "Ada", 36)
        #expect(try database.first("SELECT age FROM people WHERE name = ?", "Ada")?.decodeIfPresent("age", as: Int.self) == 36)
    }

    @Test func aDatabaseMadeByAnEarlierMigrationUpgradesAndKeepsItsRows() throws {
        let path = temporaryPath()
        do {
            let old = try Database(path: path)
            try Migrator.migrate(old, Array(steps.prefix(1)))
            try old.run("INSERT INTO people (name) VALUES (?)", "Grace")
        }
        let database = try Database(path: path)
        #expect(try Migrator.migrate(database, steps).map(\.version) == [2, 3])
        #expect(try database.first("SELECT name, age FROM people")?.decodeIfPresent("name", as: String.self) == "Grace")
    }

    @Test func aFailingMigrationNamesItsFileAndLeavesTheDatabaseAsItWas() throws {
        let database = try Database(path: temporaryPath())
        try Migrator.migrate(database, Array(steps.prefix(1)))
        // Its first statement succeeds, its second fails: the first must not stay either.
        let broken = Migration(version: 2, name: "broken", sql: "CREATE TABLE pets (id INTEGER); CREATE TABLE people (id INTEGER)")
        let error = #expect(throws: MigrationError.self) { try Migrator.migrate(database, [steps[0], broken, steps[2]]) }
        #expect(error?.fileName == "0002_broken.sql")
        #expect(error?.description.contains("already exists") == true)
        #expect(try Migrator.appliedVersions(database) == [1])
        #expect(try database.first("SELECT name FROM sqlite_master WHERE name = 'pets'") == nil)
        #expect(try database.first("SELECT name FROM sqlite_master WHERE name = 'people_by_name'") == nil) // later ones not run
    }

    /// A parent and children that go with it (ON DELETE CASCADE), populated.
    private func familyDatabase() throws -> Database {
        let database = try Database(path: temporaryPath())
        try Migrator.migrate(database, [Migration(version: 1, name: "family", sql: """
            CREATE TABLE parents (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
            CREATE TABLE children (id INTEGER PRIMARY KEY, parent_id INTEGER NOT NULL REFERENCES parents (id) ON DELETE CASCADE);
            INSERT INTO parents VALUES (1, 'a'), (2, 'b');
            INSERT INTO children VALUES (10, 1), (11, 1), (12, 2);
            """)])
        return database
    }

    @Test func aMigrationThatRebuildsAParentTableKeepsItsChildren() throws {
        let database = try familyDatabase()
        // SQLite's rebuild: new table, copy, drop the old (with foreign keys on, the drop
        // would cascade to every child), rename.
        let rebuild = Migration(version: 2, name: "rebuild_parents", sql: """
            CREATE TABLE new_parents (id INTEGER PRIMARY KEY, name TEXT NOT NULL, nickname TEXT);
            INSERT INTO new_parents (id, name) SELECT id, name FROM parents;
            DROP TABLE parents;
            ALTER TABLE new_parents RENAME TO parents;
            """)
        #expect(try Migrator.migrate(database, [rebuild]).map(\.version) == [2])
        #expect(try database.query("SELECT id FROM children ORDER BY id").compactMap { try $0.decodeIfPresent(0, as: Int.self) } == [10, 11, 12])
        #expect(try database.first("PRAGMA foreign_keys")?.decodeIfPresent(0, as: Int.self) == 1, "foreign keys are enforced again")
        // Still enforced, on the rebuilt table: a parent's delete takes its children.
        try database.run("DELETE FROM parents WHERE id = 1")
        #expect(try database.query("SELECT id FROM children").compactMap { try $0.decodeIfPresent(0, as: Int.self) } == [12])
    }

    @Test func aMigrationThatBreaksAForeignKeyFailsNamingTheTableAndChangesNothing() throws {
        let database = try familyDatabase()
        let orphaning = Migration(version: 2, name: "drop_a_parent", sql: "DELETE FROM parents WHERE id = 2; ALTER TABLE parents ADD COLUMN x")
        let error = #expect(throws: MigrationError.self) { try Migrator.migrate(database, [orphaning]) }
        #expect(error?.fileName == "0002_drop_a_parent.sql")
        #expect(error?.reason.contains("table children") == true, "\(String(describing: error))")
        #expect(try Migrator.appliedVersions(database) == [1])
        #expect(try database.query("SELECT id FROM parents ORDER BY id").compactMap { try $0.decodeIfPresent(0, as: Int.self) } == [1, 2])
        #expect(try database.query("PRAGMA table_info(parents)").count == 2, "the added column was rolled back")
        #expect(try database.first("PRAGMA foreign_keys")?.decodeIfPresent(0, as: Int.self) == 1)
    }

    @Test func migrationFilesAreReadInVersionOrderAndBadNamesRefused() throws {
        let directory = testDirectory("migrations").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try "CREATE TABLE b (x)".write(toFile: directory + "/0002_second.sql", atomically: true, encoding: .utf8)
        try "CREATE TABLE a (x)".write(toFile: directory + "/0001_first.sql", atomically: true, encoding: .utf8)
        try "not sql".write(toFile: directory + "/README.md", atomically: true, encoding: .utf8)
        let loaded = try Migrator.load(from: directory)
        #expect(loaded.map(\.fileName) == ["0001_first.sql", "0002_second.sql"])
        try "x".write(toFile: directory + "/bad.sql", atomically: true, encoding: .utf8)
        #expect(throws: MigrationError.self) { try Migrator.load(from: directory) }
    }

    @Test func transactionsRollBackWhenTheBodyThrows() throws {
        let database = try Database(path: temporaryPath())
        try database.execute("CREATE TABLE t (x INTEGER)")
        struct Stop: Error {}
        #expect(throws: Stop.self) {
            try database.transaction {
                try database.run("INSERT INTO t VALUES (?)", 1)
                throw Stop()
            }
        }
        #expect(try database.query("SELECT * FROM t").isEmpty)
        try database.transaction { try database.run("INSERT INTO t VALUES (?)", 2) }
        #expect(try database.first("SELECT x FROM t")?.decodeIfPresent("x", as: Int.self) == 2)
    }

    @Test func valuesRoundTripThroughBindingAndColumns() throws {
        let database = try Database(path: temporaryPath())
        try database.execute("CREATE TABLE v (i INTEGER, r REAL, t TEXT, b BLOB, n TEXT)")
        try database.run("INSERT INTO v VALUES (?, ?, ?, ?, ?)", Int64.max, 2.5, "naïve ✓", Blob([0, 1, 255]), String?.none)
        let row = try #require(try database.first("SELECT * FROM v"))
        #expect(try row.decode("i", as: SQLValue.self) == .integer(Int64.max))
        #expect(try row.decode("r", as: SQLValue.self) == .real(2.5))
        #expect(try row.decode("t", as: SQLValue.self) == .text("naïve ✓"))
        #expect(try row.decode("b", as: SQLValue.self) == .blob([0, 1, 255]))
        #expect(try row.decode("n", as: SQLValue.self) == .null)
    }
}

@Suite struct ChangeObservationTests {
    private func database() throws -> Database {
        let database = try Database(path: testDirectory("obs").appendingPathExtension("sqlite").path)
        try database.execute("CREATE TABLE a (x INTEGER); CREATE TABLE b (y INTEGER)")
        return database
    }

    @Test func observersHearOfCommittedTablesOnly() throws {
        let database = try database()
        let observation = ChangeObservation(database: database)
        var heard: [Set<String>] = []
        let token = observation.add { heard.append($0) }
        try database.transaction {
            try database.run("INSERT INTO a VALUES (1)")
            try database.run("INSERT INTO b VALUES (2)")
        }
        observation.transactionCommitted()
        #expect(heard == [["a", "b"]])
        struct Stop: Error {}
        _ = try? database.transaction {
            try database.run("INSERT INTO a VALUES (3)")
            throw Stop()
        }
        observation.transactionRolledBack()
        observation.transactionCommitted()
        #expect(heard.count == 1) // the rolled-back change is never told
        observation.remove(token)
        #expect(!observation.hasObservers)
        try database.run("INSERT INTO a VALUES (4)") // hooks gone: nothing buffered
        observation.transactionCommitted()
        #expect(heard.count == 1)
    }
}
