/// The locks a tus finish takes, in the one order every path takes them (docs/storage.md
/// "Lock order"): the upload's ownership (which daemon writes it), then the upload's finish
/// (`UploadSessions.finishing`: no session opens on a file being finished), then the
/// panorama's turn (its file and row change; `withPanoramaTurns`). All are the `Locker`'s. The session's own bookkeeping
/// mutex is innermost and never held across an await; a database read or write is never
/// held while a lock is awaited (a body awaits only its own statements).
package enum LockLevel: Int, Comparable, Sendable {
    case uploadOwnership = 1
    case uploadFinishing = 2
    case panoramaTurn = 3

    package static func < (a: LockLevel, b: LockLevel) -> Bool { a.rawValue < b.rawValue }
}

/// Checks the order in debug builds: a task that holds a lock of some level may only take
/// one of a higher level (the one exception: a request whose ownership another daemon took
/// over asks for it again, holding nothing by then).
package enum LockOrder {
    @TaskLocal static var innermost: LockLevel?

    package static func entering<T>(_ level: LockLevel, _ body: () async throws -> T) async throws -> T {
        #if DEBUG
        if let held = innermost {
            precondition(held < level || (held == level && level == .uploadOwnership),
                         "lock order: \(level) taken while holding \(held) (docs/storage.md \"Lock order\")")
        }
        return try await $innermost.withValue(level) { try await body() }
        #else
        return try await body()
        #endif
    }
}
