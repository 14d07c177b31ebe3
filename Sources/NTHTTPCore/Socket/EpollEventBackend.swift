#if canImport(Glibc)
import Glibc
#endif
import NTThreadPools
import CNTLinux
import Dispatch
import Synchronization

/// Readiness through an edge-triggered epoll loop per core, each on its own thread. A
/// connection stays on the loop that accepted it, so its callbacks never cross threads; the
/// listening socket is watched by every loop with EPOLLEXCLUSIVE, so one loop wakes per
/// connection. Half the CPU per request of Dispatch sources, which re-arm the descriptor and
/// wake a thread on every event.
public final class EpollEventBackend: EventBackend, Sendable {
    private let loops: [EpollLoop]

    /// Starts `loopCount` loops (at least one).
    public init(loopCount: Int) throws(SocketError) {
        var loops: [EpollLoop] = []
        for index in 0..<max(1, loopCount) {
            let loop = try EpollLoop()
            loop.start(index: index)
            loops.append(loop)
        }
        self.loops = loops
    }

    public func makeChannel(fd: Int32) -> any StartableChannel {
        // The loop serving the fewest connections, the accepting one on a tie: a burst of
        // connections that one loop accepted still spreads over every core.
        var chosen = loops.first { $0.isCurrentThread } ?? loops[0]
        for loop in loops where loop.connections.load(ordering: .relaxed) < chosen.connections.load(ordering: .relaxed) {
            chosen = loop
        }
        chosen.connections.add(1, ordering: .relaxed)
        return EpollChannel(fd: fd, loop: chosen)
    }

    public func watchListener(fd: Int32, _ acceptable: @escaping @Sendable () -> Void) -> ListenerWatch {
        let watch = EpollListenerWatch(fd: fd, loops: loops, acceptable: acceptable)
        watch.register()
        return watch
    }

    public func stop() {
        for loop in loops { loop.stop() }
    }
}

/// One loop: an epoll descriptor, an eventfd to wake it from other threads, the channels it
/// serves. Everything but `execute` and `enqueue` runs on the loop's own thread. As a task
/// executor it runs the jobs of handler tasks that only format bytes, between its events.
final class EpollLoop: TaskExecutor, @unchecked Sendable {
    private static let wakeID: UInt64 = 0

    let epollFD: Int32
    private let wakeFD: Int32
    private let thread = Atomic<UInt>(0)
    /// Set while the loop is (about to be) blocked in epoll_wait: only then does `execute`
    /// from another thread need to write the eventfd.
    private let sleeping = Atomic<Bool>(false)
    private let tasks = Mutex<[@Sendable () -> Void]>([])
    private let ids = Atomic<UInt64>(1)
    /// Channels given to this loop and not closed: counted when made, off the loop.
    let connections = Atomic<Int>(0)
    // Loop thread only:
    private var channels: [UInt64: EpollChannel] = [:]
    private var listeners: [UInt64: @Sendable () -> Void] = [:]
    private var deferred: [() -> Void] = []
    private var stopping = false

    init() throws(SocketError) {
        epollFD = nt_epoll_create()
        guard epollFD >= 0 else { throw SocketError("epoll_create1") }
        wakeFD = nt_eventfd()
        guard wakeFD >= 0 else {
            close(epollFD)
            throw SocketError("eventfd")
        }
        guard nt_epoll_ctl(epollFD, EPOLL_CTL_ADD, wakeFD, NT_EPOLLIN, Self.wakeID) == 0 else {
            close(epollFD)
            close(wakeFD)
            throw SocketError("epoll_ctl(eventfd)")
        }
    }

    var isCurrentThread: Bool { thread.load(ordering: .acquiring) == UInt(pthread_self()) }

    func newID() -> UInt64 { ids.wrappingAdd(1, ordering: .relaxed).newValue }

    /// `index`: the loop's among its server's, the mark its thread adopts (`EventLoopThread`).
    func start(index: Int) {
        startThread(named: "epoll-loop", group: "epoll-loop") { [self] in
            EventLoopThread.adopt(index: index)
            thread.store(UInt(pthread_self()), ordering: .releasing)
            run()
        }
    }

    /// Runs `work` on the loop thread, from any thread.
    func execute(_ work: @escaping @Sendable () -> Void) {
        tasks.withLock { $0.append(work) }
        // The loop sets `sleeping` before it looks at `tasks` one last time, and this looks at
        // `sleeping` after appending: one of the two sees the other, so no task is missed.
        if sleeping.load(ordering: .sequentiallyConsistent) && !isCurrentThread {
            var one: UInt64 = 1
            _ = write(wakeFD, &one, 8)
        }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        execute { [self] in job.runSynchronously(on: asUnownedTaskExecutor()) }
    }

    func assertOnLoop() {
        #if DEBUG
        precondition(isCurrentThread, "called off its event loop")
        #endif
    }

    /// Runs `work` on the loop thread after the current batch of events (loop thread only).
    func afterBatch(_ work: @escaping () -> Void) {
        deferred.append(work)
    }

    func stop() {
        execute { [self] in stopping = true }
    }

    // MARK: Loop thread

    func add(_ channel: EpollChannel) {
        let id = newID()
        channel.id = id
        channels[id] = channel
        if nt_epoll_ctl(epollFD, EPOLL_CTL_ADD, channel.fd, NT_EPOLLIN | NT_EPOLLOUT | NT_EPOLLRDHUP | NT_EPOLLET, id) != 0 {
            // Cannot happen for a fresh socket short of running out of memory: close it.
            channel.close()
        }
    }

    func remove(_ channel: EpollChannel) {
        _ = nt_epoll_ctl(epollFD, EPOLL_CTL_DEL, channel.fd, 0, 0)
        channels[channel.id] = nil
        connections.subtract(1, ordering: .relaxed)
    }

    func addListener(fd: Int32, id: UInt64, _ acceptable: @escaping @Sendable () -> Void) {
        // Level-triggered, so a connection left in the backlog wakes a loop again.
        if nt_epoll_ctl(epollFD, EPOLL_CTL_ADD, fd, NT_EPOLLIN | NT_EPOLLEXCLUSIVE, id) == 0 {
            listeners[id] = acceptable
        }
    }

    func removeListener(fd: Int32, id: UInt64) {
        _ = nt_epoll_ctl(epollFD, EPOLL_CTL_DEL, fd, 0, 0)
        listeners[id] = nil
    }

    private func run() {
        var flags = [UInt32](repeating: 0, count: 256)
        var data = [UInt64](repeating: 0, count: 256)
        while !stopping {
            sleeping.store(true, ordering: .sequentiallyConsistent)
            let pending = !deferred.isEmpty || tasks.withLock { !$0.isEmpty }
            let count = nt_epoll_wait(epollFD, &flags, &data, 256, pending ? 0 : -1)
            sleeping.store(false, ordering: .sequentiallyConsistent)
            if count < 0 && errno != EINTR { break }
            for index in 0..<max(0, Int(count)) {
                let id = data[index]
                if id == Self.wakeID {
                    var value: UInt64 = 0
                    _ = read(wakeFD, &value, 8)
                } else if let channel = channels[id] {
                    channel.handle(flags[index])
                } else if let acceptable = listeners[id] {
                    acceptable()
                }
                // An id found in neither was closed earlier in this batch: skip it.
            }
            runTasks()
        }
        for channel in channels.values { channel.close() }
        runTasks()
        close(wakeFD)
        close(epollFD)
    }

    private func runTasks() {
        // Bounded, so work that keeps scheduling work cannot starve the sockets.
        for _ in 0..<64 {
            let batch = tasks.withLock { tasks -> [@Sendable () -> Void] in
                defer { tasks.removeAll(keepingCapacity: true) }
                return tasks
            }
            let local = deferred
            deferred.removeAll(keepingCapacity: true)
            if batch.isEmpty && local.isEmpty { return }
            for task in batch { task() }
            for task in local { task() }
        }
    }
}

/// A connection's channel on an epoll loop. Registered once, edge-triggered for input and
/// output; interest flags decide which edges reach the handler. All on the loop thread.
final class EpollChannel: StartableChannel, @unchecked Sendable {
    let fd: Int32
    private let loop: EpollLoop
    var id: UInt64 = 0
    private var handler: ChannelHandler?
    private var reading = false
    private var writing = false
    private var closed = false
    /// The peer closed its side. A short read ends the handler's reading, and an end of
    /// stream that came with the last bytes brings no new edge: keep offering reads until the
    /// handler has seen it.
    private var peerHungUp = false

    init(fd: Int32, loop: EpollLoop) {
        self.fd = fd
        self.loop = loop
    }

    func start(_ handler: ChannelHandler) {
        loop.execute { [self] in
            self.handler = handler
            loop.add(self)
            setReadInterest(true)
        }
    }

    func execute(_ work: @escaping @Sendable () -> Void) {
        loop.execute(work)
    }

    var executor: any TaskExecutor { loop }

    func assertOnContext() { loop.assertOnLoop() }

    func setReadInterest(_ on: Bool) {
        guard !closed, on != reading else { return }
        reading = on
        // An edge that came while reading was off is gone: look once, the read may find bytes.
        if on {
            loop.afterBatch { [self] in deliverReadable() }
        }
    }

    func setWriteInterest(_ on: Bool) {
        // Turned on right after a write would block, so the next edge is still to come.
        guard !closed else { return }
        writing = on
    }

    func handle(_ flags: UInt32) {
        if flags & (NT_EPOLLRDHUP | NT_EPOLLHUP | NT_EPOLLERR) != 0 { peerHungUp = true }
        if flags & (NT_EPOLLIN | NT_EPOLLRDHUP | NT_EPOLLHUP | NT_EPOLLERR) != 0 {
            deliverReadable()
        }
        if writing && !closed && flags & (NT_EPOLLOUT | NT_EPOLLHUP | NT_EPOLLERR) != 0 {
            handler?.channelWritable()
        }
    }

    private func deliverReadable() {
        guard reading && !closed else { return }
        handler?.channelReadable()
        // Bounded: a handler that stops wanting input ends it, and so does the end of stream.
        var rounds = 0
        while peerHungUp && reading && !closed && rounds < 64 {
            handler?.channelReadable()
            rounds += 1
        }
    }

    func close() {
        guard !closed else { return }
        closed = true
        loop.remove(self)
        Glibc.close(fd)
        // Told after the current callback has returned, as with Dispatch.
        loop.afterBatch { [self] in
            let handler = self.handler
            self.handler = nil
            handler?.channelClosed()
        }
    }
}

/// The listening socket on every loop.
private final class EpollListenerWatch: ListenerWatch, @unchecked Sendable {
    private let fd: Int32
    private let loops: [EpollLoop]
    private let acceptable: @Sendable () -> Void
    private let ids: [UInt64]
    private let state = Mutex<(paused: Bool, cancelled: Bool)>((false, false))

    init(fd: Int32, loops: [EpollLoop], acceptable: @escaping @Sendable () -> Void) {
        self.fd = fd
        self.loops = loops
        self.acceptable = acceptable
        self.ids = loops.map { $0.newID() }
    }

    func register() {
        for (loop, id) in zip(loops, ids) {
            loop.execute { [self] in loop.addListener(fd: fd, id: id, acceptable) }
        }
    }

    private func unregister(then finished: @escaping @Sendable () -> Void) {
        let count = RemainingCount(remaining: loops.count, finished: finished)
        for (loop, id) in zip(loops, ids) {
            loop.execute { [self] in
                loop.removeListener(fd: fd, id: id)
                count.done()
            }
        }
    }

    func pause(milliseconds: Int) {
        let proceed = state.withLock { state -> Bool in
            guard !state.paused, !state.cancelled else { return false }
            state.paused = true
            return true
        }
        guard proceed else { return }
        unregister {
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(milliseconds)) { [self] in
                let resume = state.withLock { state -> Bool in
                    state.paused = false
                    return !state.cancelled
                }
                if resume { register() }
            }
        }
    }

    func cancel() {
        let proceed = state.withLock { state -> Bool in
            defer { state.cancelled = true }
            return !state.cancelled
        }
        guard proceed else { return }
        // Closed only once no loop watches it any more.
        unregister { [fd] in close(fd) }
    }
}

/// Calls `finished` when `done` has been called `remaining` times, from any threads.
private final class RemainingCount: Sendable {
    private let remaining: Atomic<Int>
    private let finished: @Sendable () -> Void

    init(remaining: Int, finished: @escaping @Sendable () -> Void) {
        self.remaining = Atomic(remaining)
        self.finished = finished
    }

    func done() {
        if remaining.wrappingSubtract(1, ordering: .acquiringAndReleasing).newValue == 0 { finished() }
    }
}
