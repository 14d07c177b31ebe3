import NTCoordination
import NTPostgresDB
import NTSQLKit
import Testing
import TestSupport
import TestTraits

/// The PostgreSQL locker: the contract, then what only several daemons show (each locker here
/// is one daemon's: a session of its own). Two tests, each with a server of its own (one
/// server per test: a server starts in about two seconds).
@Suite(.serialized, .hangGuard, .testThreads) final class PostgresLockerTests {
    let cluster: PostgresCluster
    let url: String

    init() throws {
        cluster = try PostgresCluster()
        url = try cluster.database("locks")
    }

    deinit { cluster.stop() }

    func daemon() -> PostgresLocker { PostgresLocker(url: url, waitConnections: 2, statementTimeoutSeconds: 30) }

    /// The contract, for names of the deployment and for names of one daemon.
    @Test func keepsTheContract() async throws {
        for reach in [LockName.Reach.deployment, .daemon] {
            for promise in LockerContract.Promise.allCases {
                let locker = daemon()
                defer { locker.stop() }
                try await LockerContract(locker: locker, reach: reach).check(promise)
            }
        }
    }

    @Test func coordinatesDaemons() async throws {
        try await aNameOfTheDeploymentIsOneDaemonsAtATimeAndAskedOfItsHolder()
        try await aNameOfOneDaemonIsNotTheOthers()
        try await aWaiterGetsTheLockOfADaemonThatDied()
        try await aLockLostWithItsSessionIsReportedAndFreeForOthers()
    }

    func aNameOfTheDeploymentIsOneDaemonsAtATimeAndAskedOfItsHolder() async throws {
        let (a, b) = (daemon(), daemon())
        defer { a.stop(); b.stop() }
        let name = LockName("upload/1", reach: .deployment)
        let asked = AsyncStream<Void>.makeStream()
        let held = try await a.lock(name, wait: .untilFree, holder: LockHolder(unlockRequested: { asked.continuation.yield() }))
        #expect(try await b.tryLock(name, holder: .quiet) == nil)
        let log = Log()
        let taking = Task {
            let taken = try await b.lock(name, wait: LockWait(seconds: 20, busy: "busy", askHolder: true), holder: .quiet)
            log.add("b holds")
            return taken
        }
        var requests = asked.stream.makeAsyncIterator()
        _ = await requests.next() // b's NOTIFY, heard on a's session
        log.add("a lets go")
        await a.unlock(held)
        let taken = try await taking.value
        #expect(log.entries == ["a lets go", "b holds"])
        #expect(try await a.tryLock(name, holder: .quiet) == nil)
        await b.unlock(taken)
        let back = try #require(try await a.tryLock(name, holder: .quiet))
        await a.unlock(back)
    }

    func aNameOfOneDaemonIsNotTheOthers() async throws {
        let (a, b) = (daemon(), daemon())
        defer { a.stop(); b.stop() }
        let name = LockName("finishing/1", reach: .daemon)
        let held = try await a.lock(name, wait: .untilFree, holder: .quiet)
        let other = try #require(try await b.tryLock(name, holder: .quiet))
        await a.unlock(held)
        await b.unlock(other)
    }

    /// A daemon that dies lets go with its session: the waiter is answered by the server,
    /// with nothing asked of the dead one.
    func aWaiterGetsTheLockOfADaemonThatDied() async throws {
        let (a, b) = (daemon(), daemon())
        defer { b.stop() }
        let name = LockName("panorama/1/x", reach: .deployment)
        _ = try await a.lock(name, wait: .untilFree, holder: .quiet)
        let taking = Task { try await b.lock(name, wait: LockWait(seconds: 20, busy: "busy"), holder: .quiet) }
        a.stop() // its session ends without an unlock
        let taken = try await taking.value
        await b.unlock(taken)
    }

    /// The session breaking (the server ends it) takes the locks with it: their holders are
    /// told, and another daemon can take them.
    func aLockLostWithItsSessionIsReportedAndFreeForOthers() async throws {
        let (a, b) = (daemon(), daemon())
        defer { a.stop(); b.stop() }
        let name = LockName("upload/2", reach: .deployment)
        let lost = AsyncStream<Void>.makeStream()
        let held = try await a.lock(name, wait: .untilFree, holder: LockHolder(lost: { lost.continuation.yield() }))
        let admin = PostgresStorage(url: url, transactionConnections: 1, handlerCount: 1)
        defer { admin.stop() }
        let ended = try await admin.write { try await $0.query("SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND granted") }
        #expect(ended.count == 1)
        var told = lost.stream.makeAsyncIterator()
        _ = await told.next()
        let taken = try await b.lock(name, wait: LockWait(seconds: 20, busy: "busy"), holder: .quiet)
        await a.unlock(held) // its local turn; the database's went with the session
        await b.unlock(taken)
        // a's next lock opens a new session.
        let again = try await a.lock(LockName("upload/3", reach: .deployment), wait: LockWait(seconds: 20, busy: "busy"), holder: .quiet)
        await a.unlock(again)
    }
}
