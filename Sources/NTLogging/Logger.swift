import Synchronization

/// How much is logged.
public enum LogLevel: Int, Sendable, Comparable, CaseIterable {
    case debug, info, warn, error

    public init?(name: String) {
        switch name.lowercased() {
        case "debug": self = .debug
        case "info": self = .info
        case "warn", "warning": self = .warn
        case "error": self = .error
        default: return nil
        }
    }

    public var name: String {
        switch self {
        case .debug: return "debug"
        case .info: return "info"
        case .warn: return "warn"
        case .error: return "error"
        }
    }

    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// How a line is written: logfmt (`key=value …`) or one JSON object per line.
public enum LogFormat: String, Sendable {
    case logfmt
    case json
}

/// The process's logger: levelled lines with fields, in logfmt or JSON, to a `LogSink`.
/// The level can change while the server runs (SIGHUP reload).
public final class Logger: Sendable {
    public let sink: LogSink
    public let format: LogFormat
    private let levelValue: Atomic<Int>

    public init(sink: LogSink = LogSink(), level: LogLevel = .info, format: LogFormat = .logfmt) {
        self.sink = sink
        self.format = format
        self.levelValue = Atomic(level.rawValue)
    }

    public var level: LogLevel {
        get { LogLevel(rawValue: levelValue.load(ordering: .relaxed)) ?? .info }
        set { levelValue.store(newValue.rawValue, ordering: .relaxed) }
    }

    public func isEnabled(_ level: LogLevel) -> Bool { level >= self.level }

    public func debug(_ message: String, _ fields: KeyValuePairs<String, String> = [:]) { log(.debug, message, fields) }
    public func info(_ message: String, _ fields: KeyValuePairs<String, String> = [:]) { log(.info, message, fields) }
    public func warn(_ message: String, _ fields: KeyValuePairs<String, String> = [:]) { log(.warn, message, fields) }
    public func error(_ message: String, _ fields: KeyValuePairs<String, String> = [:]) { log(.error, message, fields) }

    /// What an operator asked for and must see answered whatever the level (a reload's
    /// outcome, a stop): written at `level`, never filtered out.
    public func always(_ level: LogLevel, _ message: String, _ fields: KeyValuePairs<String, String> = [:]) {
        write(level, message, fields)
    }

    /// Writes one line at once (not batched): these lines are rare and matter when they happen.
    public func log(_ level: LogLevel, _ message: String, _ fields: KeyValuePairs<String, String>) {
        guard isEnabled(level) else { return }
        write(level, message, fields)
    }

    private func write(_ level: LogLevel, _ message: String, _ fields: KeyValuePairs<String, String>) {
        let time = WallClockTime.now()
        sink.append(immediately: true) { line in
            LineWriter.write(format, into: &line) { writer in
                writer.begin(time: time)
                writer.field("level", level.name)
                writer.field("msg", message)
                for (key, value) in fields { writer.field(key, value) }
                writer.end()
            }
        }
    }
}

/// Builds one log line in either format, field by field, into a byte array.
public struct LineWriter {
    public let format: LogFormat
    public var line: [UInt8]
    private var first = true

    private init(format: LogFormat) {
        self.format = format
        self.line = []
    }

    /// Appends one line to `line` (a batch), moving the batch in and out rather than copying it.
    public static func write(_ format: LogFormat, into line: inout [UInt8], _ build: (inout LineWriter) -> Void) {
        var writer = LineWriter(format: format)
        swap(&writer.line, &line)
        build(&writer)
        swap(&writer.line, &line)
    }

    public mutating func begin(time: WallClockTime) {
        if format == .json { line.append(UInt8(ascii: "{")) }
        key("time")
        if format == .json { line.append(UInt8(ascii: "\"")) }
        line.append(rfc3339: time)
        if format == .json { line.append(UInt8(ascii: "\"")) }
    }

    public mutating func field(_ name: String, _ value: String) {
        key(name)
        switch format {
        case .logfmt: line.append(logfmtValue: value.utf8)
        case .json: line.append(jsonString: value)
        }
    }

    /// A field whose value is raw bytes (e.g. a request path read off the wire).
    public mutating func field(_ name: String, bytes: UnsafeRawBufferPointer) {
        switch format {
        case .logfmt:
            key(name)
            line.append(logfmtValue: bytes)
        case .json:
            field(name, String(decoding: bytes, as: UTF8.self))
        }
    }

    public mutating func field(_ name: String, int value: Int) {
        key(name)
        line.append(decimal: value)
    }

    /// A field with a fixed number of decimals, e.g. a duration in milliseconds.
    public mutating func field(_ name: String, fixedPoint value: UInt64, decimals: Int) {
        key(name)
        line.append(fixedPoint: value, decimals: decimals)
    }

    public mutating func end() {
        if format == .json { line.append(UInt8(ascii: "}")) }
        line.append(UInt8(ascii: "\n"))
    }

    private mutating func key(_ name: String) {
        switch format {
        case .logfmt:
            if !first { line.append(UInt8(ascii: " ")) }
            line.append(utf8: name)
            line.append(UInt8(ascii: "="))
        case .json:
            if !first { line.append(UInt8(ascii: ",")) }
            line.append(jsonString: name)
            line.append(UInt8(ascii: ":"))
        }
        first = false
    }
}
