/// How the upload queue sends: how many transfers at once, how long it waits between
/// attempts, when a stalled connection is given up, which panoramas upload resumably.
public struct SyncOptions: Sendable, Equatable {
    /// Transfers in flight at once (and connections kept to the server).
    public var concurrentTransfers: Int = 4
    /// The wait before the second attempt; each later one doubles it, up to `maxBackoff`.
    public var initialBackoff: Duration = .seconds(2)
    public var maxBackoff: Duration = .seconds(60)
    /// The share of each wait drawn at random (0...1), so that many clients coming back at
    /// once do not retry in step.
    public var jitter: Double = 0.5
    public var connectTimeout: Duration = .seconds(10)
    /// A transfer below `lowSpeedBytesPerSecond` for `lowSpeedTime` is abandoned (and retried).
    public var lowSpeedBytesPerSecond: Int = 1024
    public var lowSpeedTime: Duration = .seconds(30)
    /// Panoramas of at least this many bytes upload with tus, and resume from the server's
    /// offset after an interruption; smaller ones in one PUT.
    public var resumableThreshold: Int64 = 16 << 20
    /// A cap on upload speed in bytes per second (metered networks); nil: none.
    public var maxSendBytesPerSecond: Int64? = nil
    /// libcurl's upload buffer: how much of a file each read takes.
    public var uploadBufferBytes: Int = 256 << 10
    /// The largest answer `remoteProperties()` and `download(propertyId:)` take: a page of
    /// properties, a tour document, a world map.
    public var maxDownloadBytes: Int64 = 256 << 20

    public init() {}

    /// The options as libcurl takes them.
    var limits: TransferLimits {
        TransferLimits(connectTimeoutMilliseconds: Int(connectTimeout.milliseconds),
                       lowSpeedBytesPerSecond: lowSpeedBytesPerSecond, lowSpeedSeconds: max(1, Int(lowSpeedTime.milliseconds / 1000)),
                       maxSendBytesPerSecond: maxSendBytesPerSecond ?? 0, uploadBufferBytes: uploadBufferBytes)
    }

    /// Throws `invalidInput` for options the queue cannot run with.
    func validated() throws(NoughtyToursError) -> SyncOptions {
        guard (1...64).contains(concurrentTransfers) else { throw .invalidInput("concurrentTransfers must be 1 to 64") }
        guard initialBackoff >= .zero, maxBackoff >= initialBackoff else { throw .invalidInput("backoff must be 0 ≤ initialBackoff ≤ maxBackoff") }
        guard (0...1).contains(jitter) else { throw .invalidInput("jitter must be between 0 and 1") }
        guard connectTimeout > .zero, lowSpeedTime > .zero, lowSpeedBytesPerSecond >= 0 else { throw .invalidInput("timeouts must be positive") }
        guard resumableThreshold > 0 else { throw .invalidInput("resumableThreshold must be positive") }
        guard (16 << 10...16 << 20).contains(uploadBufferBytes) else { throw .invalidInput("uploadBufferBytes must be 16 KiB to 16 MiB") }
        guard maxDownloadBytes >= 1 << 20 else { throw .invalidInput("maxDownloadBytes must be at least 1 MiB") }
        if let cap = maxSendBytesPerSecond, cap <= 0 { throw .invalidInput("maxSendBytesPerSecond must be positive") }
        return self
    }
}

extension Duration {
    var milliseconds: Int64 { components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000 }
    var timeInterval: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
