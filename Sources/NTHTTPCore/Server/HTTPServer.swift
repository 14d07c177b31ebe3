#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Synchronization
import NTThreadPools
import NTLogging
import CNTLinux

/// The HTTP/1.1 server: listens, accepts within the connection limit, serves each
/// connection with an `HTTPConnection`, sweeps deadlines, and shuts down gracefully.
public final class HTTPServer: Sendable {
    let context: ServerContext
    private let logger: Logger
    private let state = Mutex<State>(State())
    /// A descriptor kept in reserve: out of descriptors, it is given up for a moment to
    /// accept the waiting client and tell it 503, instead of leaving it hanging in the backlog.
    private let spareDescriptor = Mutex<Int32>(-1)
    /// The most connections open since memory was last given back (see `giveBackMemoryAfterBursts`).
    /// The most connections and request bodies at once since memory was last given back.
    private let peaks = Mutex<(connections: Int, bodies: Int)>((0, 0))
    /// The most connections the descriptor limit allows (`connectionCeiling(limit:kept:)`). At
    /// EMFILE libdispatch's own thread-pool monitor, which opens /proc files, crashes the
    /// process (SIGILL), so connections must never be what uses the last descriptors.
    private let connectionCeiling: Int

    /// What RLIMIT_NOFILE leaves for connections once `kept` descriptors are set aside
    /// (nil: a quarter of the limit, at least 32): half the rest, since each connection may
    /// hold a file besides its socket (a body being stored, a file being sent).
    public static func connectionCeiling(limit: Int, kept: Int?) -> Int {
        max(1, (limit - (kept ?? max(32, limit / 4))) / 2)
    }

    private struct State {
        var backend: (any EventBackend)?
        var listener: (any ListenerWatch)?
        var sweep: SweepTimer?
    }

    /// The deadline sweep's timer; only created, cancelled and released under the state lock.
    private struct SweepTimer: @unchecked Sendable {
        let source: DispatchSourceTimer
    }

    /// How many connections the descriptor limit leaves room for (see `connectionCeiling`).
    public var connectionsTheDescriptorLimitAllows: Int { connectionCeiling }

    public var metrics: ServerMetrics { context.metrics }
    public var router: Router { context.router }
    public var configuration: ServerConfiguration { context.configuration }

    /// `handlers`: the threads request handlers run on; by default a pool of the server's own
    /// (`handlerThreadCount`). A host can give threads that hold resources handlers use (a
    /// database pool's reader threads, whose reads then need no thread hop).
    public init(configuration: ServerConfiguration, router: Router, metrics: ServerMetrics = ServerMetrics(), logger: Logger,
                handlers: ThreadPool? = nil) {
        context = ServerContext(configuration: configuration, router: router, metrics: metrics, logger: logger, handlers: handlers)
        self.logger = logger
        var limit = rlimit()
        if getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max {
            connectionCeiling = Self.connectionCeiling(limit: Int(clamping: limit.rlim_cur), kept: configuration.descriptorsKeptForOtherUse)
        } else {
            connectionCeiling = Int.max
        }
    }

    /// Binds, starts accepting and returns the address it listens on.
    /// Whether the configuration's address can be listened on now: the host parsed and the
    /// port bound, then let go at once. What a start-up asks before it creates anything, and
    /// what check-config tries.
    public static func checkListening(_ configuration: ServerConfiguration) throws {
        let address = try SocketAddress(host: configuration.host, port: configuration.port)
        let (fd, _) = try Socket.listen(address, backlog: 1)
        close(fd)
    }

    public func start() throws -> SocketAddress {
        // sendfile(2) has no MSG_NOSIGNAL: a client gone mid-file must give EPIPE, not kill
        // the process. Ignored process-wide, whatever host embeds the server.
        signal(SIGPIPE, SIG_IGN)
        let address = try SocketAddress(host: context.configuration.host, port: context.configuration.port)
        let (fd, bound) = try Socket.listen(address, backlog: context.configuration.backlog)
        let backend: any EventBackend
        do {
            backend = try context.configuration.makeBackend()
        } catch {
            close(fd)
            throw error
        }
        spareDescriptor.withLock { $0 = open("/dev/null", O_RDONLY | O_CLOEXEC) }
        let watch = backend.watchListener(fd: fd) { [self] in acceptConnections(fd, backend) }
        let sweep = DispatchSource.makeTimerSource(queue: .global())
        let milliseconds = context.configuration.sweepIntervalMilliseconds
        sweep.schedule(deadline: .now() + .milliseconds(milliseconds), repeating: .milliseconds(milliseconds),
                       leeway: .milliseconds(max(1, milliseconds / 4)))
        sweep.setEventHandler { [self] in sweepDeadlines() }
        sweep.resume()
        let timer = SweepTimer(source: sweep)
        state.withLock {
            $0.backend = backend
            $0.listener = watch
            $0.sweep = timer
        }
        return bound
    }

    /// Stops accepting, lets requests in flight finish within the configured grace period,
    /// closes idle connections, then calls `completion` (also when the grace ran out).
    /// Applies the limits and timeouts of `new` while the server runs (a reload): the
    /// connection limit, Retry-After, the header, idle, body, send and linger timeouts, the
    /// discard limit and the shutdown grace. Where it listens, its threads and its buffers stay
    /// as they were started.
    public func updateLimits(_ new: ServerConfiguration) {
        context.update { current in
            current.maxConnections = new.maxConnections
            current.retryAfterSeconds = new.retryAfterSeconds
            current.headerTimeoutMilliseconds = new.headerTimeoutMilliseconds
            current.idleTimeoutMilliseconds = new.idleTimeoutMilliseconds
            current.bodyTimeoutMilliseconds = new.bodyTimeoutMilliseconds
            current.sendTimeoutMilliseconds = new.sendTimeoutMilliseconds
            current.lingerTimeoutMilliseconds = new.lingerTimeoutMilliseconds
            current.maxDiscardBytes = new.maxDiscardBytes
            current.shutdownGraceMilliseconds = new.shutdownGraceMilliseconds
        }
    }

    public func shutdown(_ completion: @escaping @Sendable () -> Void) {
        context.registry.isShuttingDown = true
        state.withLock { state in
            state.listener?.cancel()
            state.listener = nil
        }
        for connection in context.registry.all() {
            connection.channel.execute { connection.beginShutdown() }
        }
        let deadline = monotonicNanoseconds() + UInt64(context.configuration.shutdownGraceMilliseconds) * 1_000_000
        waitForConnections(until: deadline, completion)
    }

    private func waitForConnections(until deadline: UInt64, _ completion: @escaping @Sendable () -> Void) {
        let remaining = context.registry.all()
        if remaining.isEmpty {
            finishShutdown(completion)
            return
        }
        if monotonicNanoseconds() >= deadline {
            logger.warn("shutdown grace period over; closing connections", ["open": String(remaining.count)])
            for connection in remaining {
                connection.channel.execute { connection.channel.close() }
            }
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(10)) { [self] in
            waitForConnections(until: deadline, completion)
        }
    }

    private func finishShutdown(_ completion: @escaping @Sendable () -> Void) {
        state.withLock { state in
            state.sweep?.source.cancel()
            state.sweep = nil
            state.backend?.stop()
            state.backend = nil
        }
        spareDescriptor.withLock { spare in
            if spare >= 0 { close(spare) }
            spare = -1
        }
        if context.ownsHandlers { context.handlers.stop() }
        logger.sink.flush()
        completion()
    }

    private func acceptConnections(_ listener: Int32, _ backend: any EventBackend) {
        let configuration = context.configuration
        // Past the limit, a few more are accepted only to be told 503; past those, refused at
        // once. Both stay within what the descriptor limit leaves for connections.
        let hardLimit = min(configuration.maxConnections + configuration.maxConnections / 8 + 16, connectionCeiling)
        let softLimit = min(configuration.maxConnections, hardLimit - hardLimit / 8)
        for _ in 0..<64 {
            switch Socket.accept(listener) {
            case .accepted(let fd):
                let active = context.metrics.activeConnections
                if active >= hardLimit || context.registry.isShuttingDown {
                    answerAndClose(fd, HTTPError.unavailable("too many connections", retryAfterSeconds: configuration.retryAfterSeconds))
                    continue
                }
                let channel = backend.makeChannel(fd: fd)
                // One client must not hold every slot: past its share, its requests get 503.
                let address = Socket.peerAddress(fd)
                let fromAddress = configuration.maxConnectionsPerAddress > 0 ? address.map { context.registry.admit($0) } ?? 0 : 0
                let rejection = active >= softLimit ? "too many connections"
                    : fromAddress > configuration.maxConnectionsPerAddress ? "too many connections from your address" : nil
                let connection = HTTPConnection(channel: channel, context: context, rejection: rejection, peerAddress: address)
                context.metrics.connectionOpened()
                context.registry.insert(connection, address: configuration.maxConnectionsPerAddress > 0 ? address : nil)
                channel.start(connection)
            case .wouldBlock:
                return
            case .exhausted(let error):
                // Out of descriptors: the readiness would fire again at once, so pause accepting.
                logger.error("cannot accept connections", ["error": error.description])
                refuseWithSpareDescriptor(listener)
                pauseAccepting()
                return
            case .failed(let error):
                logger.error("accept failed", ["error": error.description])
                return
            }
        }
    }

    /// Accepts one waiting client on the spare descriptor, answers it 503 and closes it, then
    /// takes the spare again (the nginx/libuv "reserve fd" technique).
    private func refuseWithSpareDescriptor(_ listener: Int32) {
        spareDescriptor.withLock { spare in
            guard spare >= 0 else { return }
            close(spare)
            let fd = Glibc.accept(listener, nil, nil)
            if fd >= 0 {
                answerAndClose(fd, HTTPError.unavailable("the server is out of file descriptors", retryAfterSeconds: context.configuration.retryAfterSeconds))
            }
            spare = open("/dev/null", O_RDONLY | O_CLOEXEC)
        }
    }

    /// A 503 written at once (a fresh socket's buffer takes it whole) and the socket closed.
    private func answerAndClose(_ fd: Int32, _ error: HTTPError) {
        let answer = Response.error(error).closingBytes()
        _ = answer.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
        close(fd)
    }

    private func pauseAccepting() {
        state.withLock { $0.listener }?.pause(milliseconds: 100)
    }

    /// Once a burst of connections or of request bodies is over, the memory their threads
    /// freed goes back to the system (`FreedMemory`): after 300 connections had gone,
    /// malloc_trim gave back 9 MB of 39; after 32 uploads at once, what their buffers held.
    /// On the sweep's thread, never a loop's.
    private func giveBackMemoryAfterBursts() {
        let (active, bodies) = (context.metrics.activeConnections, context.metrics.bodiesInProgress)
        let burstEnded = peaks.withLock { peaks -> Bool in
            peaks = (max(peaks.connections, active), max(peaks.bodies, bodies))
            let connectionsEnded = peaks.connections >= 64 && active <= peaks.connections / 4
            let bodiesEnded = peaks.bodies >= 8 && bodies == 0
            guard connectionsEnded || bodiesEnded else { return false }
            peaks = (active, bodies)
            return true
        }
        if burstEnded { FreedMemory.giveBack() }
    }

    private func sweepDeadlines() {
        giveBackMemoryAfterBursts()
        context.bodyBuffers.releaseIdle()
        let now = monotonicNanoseconds()
        for connection in context.registry.all() {
            let due = connection.deadline.load(ordering: .relaxed)
            if due != 0 && due <= now {
                connection.channel.execute { connection.checkDeadline() }
            }
        }
        logger.sink.flush()
    }
}
