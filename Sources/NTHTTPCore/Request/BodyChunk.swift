#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// A piece of a request body, as its handler receives it: bytes in a fixed-size buffer of the
/// server's pool, which goes back to the pool when the chunk is released. Reusing buffers of
/// one size keeps the allocator from fragmenting under many uploads (per-read allocations of
/// varying sizes across threads had grown a malloc arena to three times the bytes in flight).
public final class BodyChunk: @unchecked Sendable {
    private let storage: UnsafeMutableRawPointer
    private let pool: BodyBufferPool
    /// Written only by the body stream, under its lock, before the chunk is handed out.
    public private(set) var count = 0

    init(pool: BodyBufferPool) {
        self.pool = pool
        storage = pool.take()
    }

    deinit { pool.recycle(storage) }

    var room: Int { pool.bufferSize - count }

    /// Appends as much of `bytes` as fits; returns how much.
    func append(_ bytes: UnsafeRawBufferPointer) -> Int {
        let taken = min(room, bytes.count)
        if taken > 0 { (storage + count).copyMemory(from: bytes.baseAddress!, byteCount: taken) }
        count += taken
        return taken
    }

    /// Reads into the free part of the buffer (at most `limit` bytes) with `read`; what it
    /// read becomes part of the chunk.
    func fill(upTo limit: Int, _ read: (UnsafeMutableRawBufferPointer) -> Socket.IOResult) -> Socket.IOResult {
        let result = read(UnsafeMutableRawBufferPointer(start: storage + count, count: min(room, limit)))
        if case .bytes(let read) = result { count += read }
        return result
    }

    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try body(UnsafeRawBufferPointer(start: storage, count: count))
    }

    /// The bytes, copied out.
    public var bytes: [UInt8] { withUnsafeBytes { Array($0) } }
}

/// Buffers of one size for request bodies, kept for reuse up to what the body budget can
/// hold at once; past that they are unmapped, and so are the kept ones once no body has taken
/// one for a while (`releaseIdle`): a burst of uploads leaves the budget's worth resident
/// otherwise. They are mapped pages of their own, not malloc memory: taken on an event loop
/// and released on a file thread, malloc'd buffers went back to the loop thread's arena, whose
/// freed chunks stay resident among others still in use (the arenas of two loops held 14 MB
/// for 6 MB of buffers under 32 uploads).
final class BodyBufferPool: Sendable {
    let bufferSize: Int
    private let keep: Int
    private let free = Mutex<[UInt]>([])
    /// Whether a buffer was taken since `releaseIdle` last looked.
    private let takenSinceLook = Atomic<Bool>(false)

    init(bufferSize: Int, budget: Int) {
        self.bufferSize = bufferSize
        keep = max(1, budget / bufferSize)
    }

    deinit {
        unmap(free.withLock { $0 })
    }

    func take() -> UnsafeMutableRawPointer {
        takenSinceLook.store(true, ordering: .relaxed)
        if let address = free.withLock({ $0.popLast() }), let buffer = UnsafeMutableRawPointer(bitPattern: address) {
            return buffer
        }
        let buffer = mmap(nil, bufferSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
        guard let buffer, buffer != MAP_FAILED else { fatalError("out of memory for a \(bufferSize)-byte body buffer") }
        return buffer
    }

    func recycle(_ buffer: UnsafeMutableRawPointer) {
        let kept = free.withLock { free -> Bool in
            guard free.count < keep else { return false }
            free.append(UInt(bitPattern: buffer))
            return true
        }
        if !kept { unmap(buffer) }
    }

    /// Unmaps the kept buffers if none was taken since the last call; called at a steady pace
    /// (the server's sweep), it gives them back one to two periods after the last body, and
    /// never while bodies keep arriving.
    func releaseIdle() {
        guard !takenSinceLook.exchange(false, ordering: .relaxed) else { return }
        unmap(free.withLock { free in defer { free = [] }; return free })
    }

    /// How many buffers are kept for reuse.
    var keptCount: Int { free.withLock { $0.count } }

    private func unmap(_ buffer: UnsafeMutableRawPointer) {
        munmap(buffer, bufferSize)
    }

    private func unmap(_ addresses: [UInt]) {
        for address in addresses { unmap(UnsafeMutableRawPointer(bitPattern: address)!) }
    }
}
