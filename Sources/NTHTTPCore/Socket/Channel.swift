/// One connected socket as the HTTP connection sees it: readiness callbacks and a serial
/// context to run on. The connection does its own read and write calls on `fd`; what a
/// channel hides is how readiness is learned — Dispatch sources today, an edge-triggered
/// epoll loop later — so that either can drive the parser and the handlers unchanged.
///
/// A channel's methods other than `execute` and `executor` are called only on its context.
public protocol Channel: AnyObject, Sendable {
    var fd: Int32 { get }
    /// Runs `work` on the channel's serial context, from any thread.
    func execute(_ work: @escaping @Sendable () -> Void)
    /// The context as a task executor, for handler tasks that only format bytes and may run
    /// where their connection runs.
    var executor: any TaskExecutor { get }
    /// Fails loudly in debug builds when called off the channel's context.
    func assertOnContext()
    /// Whether `channelReadable` should be called when the socket has input (back-pressure:
    /// off while the connection cannot take more). Turning it on again delivers a callback
    /// if input is waiting.
    func setReadInterest(_ on: Bool)
    /// Whether `channelWritable` should be called when the socket can take output.
    func setWriteInterest(_ on: Bool)
    /// Stops all callbacks, closes the descriptor and then calls `channelClosed` once.
    func close()
}

/// The receiver of a channel's callbacks, all on the channel's context.
public protocol ChannelHandler: AnyObject, Sendable {
    func channelReadable()
    func channelWritable()
    /// The descriptor is closed; no callback follows.
    func channelClosed()
}

/// Makes channels and watches listening sockets: `EpollEventBackend`.
public protocol EventBackend: Sendable {
    /// A channel for a connected, non-blocking socket. Callbacks start once `start` is called.
    func makeChannel(fd: Int32) -> any StartableChannel
    /// Calls `acceptable` whenever the listening socket has connections to accept, until the
    /// returned watch is cancelled (which closes the listening socket).
    func watchListener(fd: Int32, _ acceptable: @escaping @Sendable () -> Void) -> ListenerWatch
    /// Releases the backend's threads once the server is done with it.
    func stop()
}

/// A channel before its callbacks begin.
public protocol StartableChannel: Channel {
    func start(_ handler: ChannelHandler)
}

/// Controls the watch on a listening socket.
public protocol ListenerWatch: Sendable {
    /// No accept callbacks for a while: when out of descriptors, readiness would fire at once
    /// again and spin.
    func pause(milliseconds: Int)
    /// Stops watching and closes the listening socket.
    func cancel()
}
