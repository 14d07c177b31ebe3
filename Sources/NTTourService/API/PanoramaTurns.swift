import NTCoordination

extension ServiceContext {
    /// Runs `body` holding the turns of panoramas `keys`: one request at a time per panorama
    /// id, in every daemon of the deployment, while its file and row change. A re-send arriving
    /// while the first is storing waits (up to `uploadTakeoverSeconds`, then 503) and is
    /// answered as a re-send, instead of finding a file without its row.
    func withPanoramaTurns<T>(_ keys: [BlobKey], _ body: () async throws -> T) async throws -> T {
        let wait = LockWait(seconds: Double(config.uploadTakeoverSeconds), busy: "another request is storing this panorama; try again")
        return try await LockOrder.entering(.panoramaTurn) {
            try await locker.withLocks(keys.map { LockName("panorama/\($0.tenant)/\($0.id)", reach: .deployment) }, wait: wait, body)
        }
    }
}
