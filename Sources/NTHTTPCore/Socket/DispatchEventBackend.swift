#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Synchronization

/// Readiness through Dispatch sources: per connection one serial queue targeting the global
/// concurrent queue (plain serial queues grew to many threads), one read source and one
/// write source for the descriptor's whole life, never re-created.
public struct DispatchEventBackend: EventBackend {
    public init() {}

    public func makeChannel(fd: Int32) -> any StartableChannel {
        DispatchChannel(fd: fd, queue: DispatchQueue(label: "http.connection", target: .global()))
    }

    public func watchListener(fd: Int32, _ acceptable: @escaping @Sendable () -> Void) -> ListenerWatch {
        let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: DispatchQueue(label: "http.accept", target: .global()))
        source.setEventHandler(handler: acceptable)
        // Close only once the source has let go of the descriptor.
        source.setCancelHandler { Glibc.close(fd) }
        source.resume()
        return DispatchListenerWatch(source: source)
    }

    /// Dispatch's threads are the system's: nothing to release.
    public func stop() {}
}

private final class DispatchListenerWatch: ListenerWatch, @unchecked Sendable {
    private let source: DispatchSourceRead
    private let paused = Mutex(false)

    init(source: DispatchSourceRead) {
        self.source = source
    }

    func pause(milliseconds: Int) {
        let wasPaused = paused.withLock { paused in
            defer { paused = true }
            return paused
        }
        guard !wasPaused else { return }
        source.suspend()
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(milliseconds)) { [self] in
            paused.withLock { $0 = false }
            source.resume()
        }
    }

    func cancel() { source.cancel() }
}

/// A channel on Dispatch sources. All state is touched only on `queue`.
final class DispatchChannel: StartableChannel, @unchecked Sendable {
    let fd: Int32
    private let queue: DispatchQueue
    private let readSource: DispatchSourceRead
    private let writeSource: DispatchSourceWrite
    // Sources start suspended; these mirror whether each is resumed, since suspend and
    // resume must balance and a suspended source never runs its cancel handler.
    private var reading = false
    private var writing = false
    private var closed = false
    private var sourcesLeft = 2
    private var handler: ChannelHandler?

    init(fd: Int32, queue: DispatchQueue) {
        self.fd = fd
        self.queue = queue
        readSource = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        writeSource = DispatchSource.makeWriteSource(fileDescriptor: fd, queue: queue)
    }

    func start(_ handler: ChannelHandler) {
        queue.async { [self] in
            self.handler = handler
            readSource.setEventHandler { [unowned self] in self.handler?.channelReadable() }
            writeSource.setEventHandler { [unowned self] in self.handler?.channelWritable() }
            // The descriptor is closed only after both sources are cancelled, never before.
            let cancelled: @Sendable () -> Void = { [unowned self] in self.sourceCancelled() }
            readSource.setCancelHandler(handler: cancelled)
            writeSource.setCancelHandler(handler: cancelled)
            setReadInterest(true)
        }
    }

    func execute(_ work: @escaping @Sendable () -> Void) {
        queue.async(execute: work)
    }

    var executor: any TaskExecutor { QueueExecutor(queue: queue) }

    func assertOnContext() {
        #if DEBUG
        dispatchPrecondition(condition: .onQueue(queue))
        #endif
    }

    func setReadInterest(_ on: Bool) {
        guard !closed, on != reading else { return }
        reading = on
        if on { readSource.resume() } else { readSource.suspend() }
    }

    func setWriteInterest(_ on: Bool) {
        guard !closed, on != writing else { return }
        writing = on
        if on { writeSource.resume() } else { writeSource.suspend() }
    }

    func close() {
        guard !closed else { return }
        closed = true
        readSource.cancel()
        writeSource.cancel()
        if !reading { readSource.resume() }
        if !writing { writeSource.resume() }
    }

    private func sourceCancelled() {
        sourcesLeft -= 1
        guard sourcesLeft == 0 else { return }
        Glibc.close(fd)
        let handler = self.handler
        self.handler = nil
        handler?.channelClosed()
    }
}

/// A connection's serial queue as a task executor.
private final class QueueExecutor: TaskExecutor, @unchecked Sendable {
    let queue: DispatchQueue

    init(queue: DispatchQueue) {
        self.queue = queue
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { [self] in job.runSynchronously(on: asUnownedTaskExecutor()) }
    }
}
