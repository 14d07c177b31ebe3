import NTLogging

/// One logfmt (or JSON) line per request, batched into the log sink and flushed by the
/// server's timer: time, request id, method, path, status, body bytes in and out, duration.
struct AccessLog: Sendable {
    let logger: Logger

    struct Entry {
        var id: RequestID
        var method: String
        var path: String
        var status: Int
        var bytesIn: Int64
        var bytesOut: Int64
        var nanoseconds: UInt64
    }

    func write(_ entry: Entry) {
        guard logger.isEnabled(.info) else { return }
        let time = WallClockTime.now()
        logger.sink.append { line in
            LineWriter.write(logger.format, into: &line) { writer in
                writer.begin(time: time)
                writer.field("level", "info")
                writer.field("msg", "request")
                writer.field("id", entry.id.description)
                writer.field("method", entry.method)
                writer.field("path", entry.path)
                writer.field("status", int: entry.status)
                writer.field("in", int: Int(entry.bytesIn))
                writer.field("out", int: Int(entry.bytesOut))
                writer.field("duration_ms", fixedPoint: entry.nanoseconds / 1000, decimals: 3)
                writer.end()
            }
        }
    }
}
