import Synchronization

/// The open connections, for the deadline sweep and for shutdown.
final class ConnectionRegistry: Sendable {
    private let connections = Mutex<Connections>(Connections())

    private struct Connections {
        var all: [ObjectIdentifier: HTTPConnection] = [:]
        /// Each connection's peer address, and how many connections each address has.
        var addressOf: [ObjectIdentifier: [UInt8]] = [:]
        var perAddress: [[UInt8]: Int] = [:]
    }
    private let shuttingDown = Atomic<Bool>(false)

    /// Once set, every answer closes its connection.
    var isShuttingDown: Bool {
        get { shuttingDown.load(ordering: .relaxed) }
        set { shuttingDown.store(newValue, ordering: .relaxed) }
    }

    /// Counts a new connection from `address`; returns how many that address now has. The
    /// connection is then inserted with the same address, which `remove` counts down.
    func admit(_ address: [UInt8]) -> Int {
        connections.withLock { state in
            state.perAddress[address, default: 0] += 1
            return state.perAddress[address] ?? 0
        }
    }

    /// Adds a connection; `address` as admitted (nil: not counted by address).
    func insert(_ connection: HTTPConnection, address: [UInt8]? = nil) {
        let id = ObjectIdentifier(connection)
        connections.withLock { state in
            state.all[id] = connection
            if let address { state.addressOf[id] = address }
        }
    }

    func remove(_ connection: HTTPConnection) {
        let id = ObjectIdentifier(connection)
        connections.withLock { state in
            state.all.removeValue(forKey: id)
            guard let address = state.addressOf.removeValue(forKey: id) else { return }
            let left = (state.perAddress[address] ?? 1) - 1
            state.perAddress[address] = left > 0 ? left : nil
        }
    }

    var count: Int { connections.withLock { $0.all.count } }

    /// A snapshot, so that no lock is held while connections are visited.
    func all() -> [HTTPConnection] {
        connections.withLock { Array($0.all.values) }
    }
}
