import Foundation
import Testing
import TestSupport
import TestTraits
import NTPostgresDB
import NTSQLiteDB
@testable import NTServiceHTTP
@testable import NTServiceModel
@testable import NTServiceStorage
@testable import NTTourService
@testable import NTTourUseCases
@testable import NTUploads
@testable import NTViewerService
@testable import NTWebhooks

/// docs/api.md "Errors": a storage failure of any backend is answered by its kind, in one place.
@Suite(.hangGuard, .testThreads) struct StorageErrorTests {
    @Test(arguments: [
        (StorageError(.unavailable, "away"), ServiceError.Code.unavailable, 503),
        (StorageError(.full, "full"), .insufficientStorage, 507),
        (StorageError(.corrupt, "bad row"), .internal, 500),
        (StorageError(.failed, "I/O"), .internal, 500),
    ])
    func eachKindHasOneAnswer(error: StorageError, code: ServiceError.Code, status: Int) {
        let answer = ServiceError(storage: error, retryAfterSeconds: 3)
        #expect(answer.code == code)
        #expect(answer.message == error.message)
        #expect(Int(answer.httpError.status.code) == status)
    }

    @Test func retryAfterIsTheStoresWhenItKnowsBetter() {
        #expect(ServiceError(storage: StorageError(.unavailable, "away"), retryAfterSeconds: 3).retryAfterSeconds == 3)
        #expect(ServiceError(storage: StorageError(.unavailable, "away", retryAfterSeconds: 9), retryAfterSeconds: 3).retryAfterSeconds == 9)
    }

    @Test func eachBackendSaysWhichKindItsErrorIs() {
        #expect(PostgresError(sqlState: "", message: "connection refused").storageError.kind == .unavailable)
        #expect(PostgresError(sqlState: "57P01", message: "terminating connection").storageError.kind == .unavailable)
        #expect(PostgresError(sqlState: "53100", message: "could not extend file").storageError.kind == .full)
        #expect(PostgresError(sqlState: "42P01", message: "relation does not exist").storageError.kind == .failed)
        #expect(SQLiteError(code: 13, message: "database or disk is full").storageError == StorageError(.full, "the server's disk is full"))
    }

    /// An answer names the component that failed, never its address: the backend's own words
    /// (a host and port) are the log's, in the error's detail.
    @Test func anAnswerNamesTheComponentNotItsAddress() {
        let refused = #"connection to server at "10.0.0.7", port 5432 failed: Connection refused"#
        let failure = PostgresError(sqlState: "", message: refused).storageError
        let answer = ServiceError(storage: failure, retryAfterSeconds: 1)
        #expect(answer.message == "the database is unavailable; try again shortly")
        #expect(!answer.httpError.message.contains("10.0.0.7") && !answer.httpError.message.contains("5432"))
        #expect(failure.description.contains("10.0.0.7")) // what the log says
    }

    /// A row the code cannot read (SQLite keeps text in an INTEGER column) is a 500 that says
    /// which column, for that request only: the daemon goes on, and the value never reads as 0.
    @Test func aRowThatCannotBeReadIsA500ForThatRequestOnly() async throws {
        let harness = try await ServiceHarness(alone: true, configure: ServiceHarness.onSQLite)
        let client = try harness.client(harness.alpha)
        let broken = newID(), sound = newID()
        #expect(try client.putProperty(broken, name: "Villa").status == 201)
        #expect(try client.putProperty(sound, name: "Loft").status == 201)
        _ = try await harness.service.records.write { try await $0.run("UPDATE properties SET floor_count = 'two' WHERE id = ?", broken) }
        let answer = try client.send("GET", "/v1/properties/\(broken)")
        #expect(answer.status == 500)
        #expect(answer.errorCode == "internal")
        #expect(answer.text.contains("column floor_count holds text where an integer must be"), "\(answer.text)")
        #expect(try client.send("GET", "/v1/properties/\(sound)").status == 200)
        await harness.finish()
    }
}
