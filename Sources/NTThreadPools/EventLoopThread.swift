/// A thread that serves sockets (an event loop): it must never wait on a disk. It marks itself
/// (`adopt`) when it starts, for its whole life; what runs on it asks `current`, so that work
/// which could wait is either done without waiting or handed to other threads. A database in
/// this process reads on such a thread only what memory already holds (`refusedWaits` counts
/// the reads it refused: the database then answers from its own threads).
public final class EventLoopThread: @unchecked Sendable {
    /// The loop's index among its server's loops.
    public let index: Int
    /// Waits refused on this thread so far (a file read the page cache could not answer, a
    /// sleep). Touched by this thread alone: a caller compares it before and after an attempt.
    public var refusedWaits = 0

    private init(index: Int) {
        self.index = index
    }

    /// Marks the calling thread as loop `index` for the rest of its life.
    public static func adopt(index: Int) {
        mark.adopt(EventLoopThread(index: index))
    }

    /// The calling thread's mark, when it is an event loop's.
    public static var current: EventLoopThread? { mark.current }

    private static let mark = ThreadMark<EventLoopThread>()
}
