import Synchronization

/// The open connections, for the deadline sweep and for shutdown.
final class ConnectionRegistry: Sendable {
    private let connections = Mutex<[ObjectIdentifier: HTTPConnection]>([:])
    private let shuttingDown = Atomic<Bool>(false)

    /// Once set, every answer closes its connection.
    var isShuttingDown: Bool {
        get { shuttingDown.load(ordering: .relaxed) }
        set { shuttingDown.store(newValue, ordering: .relaxed) }
    }

    func insert(_ connection: HTTPConnection) {
        connections.withLock { $0[ObjectIdentifier(connection)] = connection }
    }

    func remove(_ connection: HTTPConnection) {
        _ = connections.withLock { $0.removeValue(forKey: ObjectIdentifier(connection)) }
    }

    var count: Int { connections.withLock { $0.count } }

    /// A snapshot, so that no lock is held while connections are visited.
    func all() -> [HTTPConnection] {
        connections.withLock { Array($0.values) }
    }
}
