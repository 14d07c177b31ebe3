import NTThreadPools

/// Every limit and timeout of the HTTP layer. The daemon fills it from its config file.
public struct ServerConfiguration: Sendable {
    /// Edge-triggered epoll loops sockets are watched on; 0 for one per online CPU.
    public var eventLoopCount: Int = 0
    /// Threads request handlers run on (their blocking work goes to pools of its own); 0 for
    /// one per online CPU.
    public var handlerThreadCount: Int = 0
    public var host: String = "127.0.0.1"
    public var port: UInt16 = 8080
    public var backlog: Int32 = 1024
    /// Open connections served at once; past it, new ones get 503 with `Retry-After`.
    public var maxConnections: Int = 1024
    /// Descriptors the process needs besides connections and the files their requests open
    /// (its databases, pools, logs, the runtime): nil for a quarter of RLIMIT_NOFILE, at least
    /// 32. A daemon that is the process's only server counts them at start instead.
    public var descriptorsKeptForOtherUse: Int? = nil
    /// Seconds in the `Retry-After` of 503 answers.
    public var retryAfterSeconds: Int = 1
    /// Request line plus header section (431 past it).
    public var maxHeadBytes: Int = 16 * 1024
    /// The read buffer of each connection, for heads and what follows them; at least
    /// `maxHeadBytes`. Request bodies are read into buffers of `bodyBufferBytes`.
    public var readBufferBytes: Int = 16 * 1024
    /// The size of the pooled buffers request bodies are read into.
    public var bodyBufferBytes: Int = 64 * 1024
    /// From the first byte of a request to the end of its head (408).
    public var headerTimeoutMilliseconds: Int = 10_000
    /// A keep-alive connection with no request in progress is closed after this.
    public var idleTimeoutMilliseconds: Int = 60_000
    /// A request body that makes no progress for this long ends with 408.
    public var bodyTimeoutMilliseconds: Int = 30_000
    /// After that long, a body must also have averaged at least this many bytes a second
    /// (a byte every 25 s is progress, but no upload): else 408. 0 turns it off.
    public var minBodyBytesPerSecond: Int = 1024
    /// The connections one peer address may hold; past it, its requests get 503 (one client
    /// must not hold every slot). 0: no cap (behind a proxy on the same host, all clients
    /// share its address).
    public var maxConnectionsPerAddress: Int = 256
    /// A client that reads nothing of a response for this long is disconnected.
    public var sendTimeoutMilliseconds: Int = 30_000
    /// After a response that closes the connection while the client may still be sending,
    /// input is read and dropped this long, so the client sees the response and not a reset.
    public var lingerTimeoutMilliseconds: Int = 2_000
    /// A body the handler did not read, up to this size, is read and dropped so the
    /// connection stays open; a larger one closes the connection.
    public var maxDiscardBytes: Int64 = 64 * 1024
    /// On SIGTERM, requests in flight get this long to finish.
    public var shutdownGraceMilliseconds: Int = 10_000
    /// The most a request body hands its handler at once (`RequestBody.batches`): one disk
    /// write for many socket reads.
    public var bodyBatchBytes: Int = 1 << 20
    /// The memory all request bodies together may hold between the socket and their handlers
    /// (bytes buffered, and the batches being written): past it, connections stop reading
    /// their bodies until handlers release some. Each body's batches are an equal share of
    /// it, up to `bodyBatchBytes`.
    public var bodyBufferBudgetBytes: Int = 4 << 20

    public init() {}

    /// The loops the server starts: `eventLoopCount`, or one per online CPU.
    public var eventLoops: Int { eventLoopCount > 0 ? eventLoopCount : ThreadPool.onlineCPUs }

    func makeBackend() throws(SocketError) -> any EventBackend {
        try EpollEventBackend(loopCount: eventLoops)
    }

    /// The high watermark of one body's stream while `bodiesInProgress` bodies are received.
    func bodyHighWatermark(bodiesInProgress: Int) -> Int {
        max(1, min(bodyBatchBytes, bodyBufferBudgetBytes / max(1, bodiesInProgress)))
    }

    /// The connection timeouts, in nanoseconds.
    var timeouts: ConnectionStateMachine.Timeouts {
        .init(header: UInt64(headerTimeoutMilliseconds) * 1_000_000, idle: UInt64(idleTimeoutMilliseconds) * 1_000_000,
              body: UInt64(bodyTimeoutMilliseconds) * 1_000_000, send: UInt64(sendTimeoutMilliseconds) * 1_000_000,
              linger: UInt64(lingerTimeoutMilliseconds) * 1_000_000, minBodyBytesPerSecond: UInt64(max(0, minBodyBytesPerSecond)))
    }

    /// The shortest timeout, which sets how often deadlines are checked.
    var sweepIntervalMilliseconds: Int {
        let shortest = [headerTimeoutMilliseconds, idleTimeoutMilliseconds, bodyTimeoutMilliseconds,
                        sendTimeoutMilliseconds, lingerTimeoutMilliseconds].min() ?? 1000
        return max(5, min(1000, shortest / 4))
    }
}

