import NTSQLKit

/// Identical statements that share one execution on a connection (the same token's check asked
/// by several requests in one run of the thread's jobs): which statement leads, who joined it,
/// and until when it may be joined: until its batch is sent, or until it is answered, whichever
/// comes first (a connection that could not be made answers it before any batch). Pure.
struct StatementJoins<Follower> {
    struct Key: Equatable {
        let sql: String
        let values: [SQLValue]
    }

    /// Leaders asked since the last batch went out and not answered yet.
    private var open: [(id: Int, key: Key)] = []
    private var followers: [Int: [Follower]] = [:]

    /// `follower` joins the open leader asked identically, and true; false when there is none,
    /// and then `id` leads (the caller asks it).
    mutating func join(_ key: Key, id: Int, _ follower: Follower) -> Bool {
        guard let leader = open.first(where: { $0.key == key }) else {
            open.append((id, key))
            return false
        }
        followers[leader.id, default: []].append(follower)
        return true
    }

    /// Statement `id` was answered (or failed): who joined it, told the same; no one joins it now.
    mutating func answered(_ id: Int) -> [Follower] {
        open.removeAll { $0.id == id }
        return followers.removeValue(forKey: id) ?? []
    }

    /// The batch went out: what is asked from now on joins nothing sent before it.
    mutating func batchSent() {
        open.removeAll(keepingCapacity: true)
    }

    /// Everyone who joined a statement not answered yet (the connections stopped).
    mutating func removeAll() -> [Follower] {
        open = []
        defer { followers = [:] }
        return Array(followers.values.joined())
    }
}
