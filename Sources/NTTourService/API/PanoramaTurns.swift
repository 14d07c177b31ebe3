/// One request at a time per panorama id, while its file and row change: within this daemon
/// (`AsyncKeyedLock`), and with several daemons on one database also across them (an advisory
/// lock, taken after the local turn so that only one request per daemon asks for it). A re-send
/// arriving at another daemon while the first is storing then waits and is answered as a
/// re-send, instead of finding a file without its row.
final class PanoramaTurns: Sendable {
    private let local = AsyncKeyedLock<BlobKey>(level: .panoramaTurn)
    private let shared: AdvisoryLocks?
    private let waitSeconds: Double

    init(shared: AdvisoryLocks?, waitSeconds: Double) {
        self.shared = shared
        self.waitSeconds = waitSeconds
    }

    func withTurn<T>(_ key: BlobKey, _ body: () async throws -> T) async throws -> T {
        try await withTurns([key], body)
    }

    /// Holds every key of `keys` at once, taken in one order (by id) in every daemon.
    func withTurns<T>(_ keys: [BlobKey], _ body: () async throws -> T) async throws -> T {
        try await local.withLocks(keys, by: Self.order) {
            guard let shared else { return try await body() }
            let names = Array(Set(keys)).sorted(by: Self.order).map { "panorama/\($0.tenant)/\($0.id)" }
            var held: [String] = []
            do {
                for name in names {
                    try await shared.lock(name, waitSeconds: waitSeconds, busy: "another daemon is storing this panorama; try again")
                    held.append(name)
                }
                let value = try await body()
                await Self.unlock(held, shared)
                return value
            } catch {
                await Self.unlock(held, shared)
                throw error
            }
        }
    }

    /// A lock that cannot be let go (the database went away) went with its connection.
    private static func unlock(_ names: [String], _ shared: AdvisoryLocks) async {
        for name in names.reversed() { try? await shared.unlock(name) }
    }

    private static func order(_ a: BlobKey, _ b: BlobKey) -> Bool { (a.tenant, a.id) < (b.tenant, b.id) }
}
