import CNTSQLite

/// Tells observers which tables a committed transaction changed, as GRDB's
/// TransactionObserver does: `sqlite3_update_hook` is installed only while someone observes,
/// changes are buffered during the transaction, and observers hear of them only after the
/// commit (never of a rolled-back one). It sees this connection's writes only, not other
/// processes'. Used on the connection's owner thread, like the connection itself.
public final class ChangeObservation {
    public typealias Observer = (Set<String>) -> Void

    private let database: Database
    private var observers: [Int: Observer] = [:]
    private var nextToken = 0
    private var changed: Set<String> = []
    private var installed = false

    public init(database: Database) {
        self.database = database
    }

    deinit { uninstall() }

    /// Adds an observer; returns the token that removes it.
    public func add(_ observer: @escaping Observer) -> Int {
        nextToken += 1
        observers[nextToken] = observer
        if !installed { install() }
        return nextToken
    }

    /// Removes an observer; with the last one gone the hooks are removed too.
    public func remove(_ token: Int) {
        observers[token] = nil
        if observers.isEmpty { uninstall() }
    }

    public var hasObservers: Bool { !observers.isEmpty }

    /// Call after a transaction committed: observers hear of the tables it changed.
    public func transactionCommitted() {
        guard !changed.isEmpty else { return }
        let tables = changed
        changed = []
        for observer in observers.values { observer(tables) }
    }

    /// Call after a transaction rolled back: what it changed never happened.
    public func transactionRolledBack() {
        changed = []
    }

    fileprivate func tableChanged(_ name: String) {
        changed.insert(name)
    }

    private func install() {
        installed = true
        let context = Unmanaged.passUnretained(self).toOpaque()
        sqlite3_update_hook(database.handle, { context, _, _, table, _ in
            guard let context, let table else { return }
            Unmanaged<ChangeObservation>.fromOpaque(context).takeUnretainedValue().tableChanged(String(cString: table))
        }, context)
    }

    private func uninstall() {
        guard installed else { return }
        installed = false
        sqlite3_update_hook(database.handle, nil, nil)
        changed = []
    }
}
