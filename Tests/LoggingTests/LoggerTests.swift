#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import NTThreadPools
import TestSupport
@testable import NTLogging

/// Captures what a sink writes, through a pipe.
final class CapturedOutput: Sendable {
    let readFD: Int32
    let writeFD: Int32

    init() {
        var fds: [Int32] = [0, 0]
        pipe(&fds)
        readFD = fds[0]
        writeFD = fds[1]
        _ = fcntl(readFD, F_SETFL, fcntl(readFD, F_GETFL) | O_NONBLOCK)
    }

    deinit {
        close(readFD)
        close(writeFD)
    }

    /// Fills the pipe: a blocking write to it then waits until it is read.
    func fill() {
        let flags = fcntl(writeFD, F_GETFL)
        _ = fcntl(writeFD, F_SETFL, flags | O_NONBLOCK)
        let block = [UInt8](repeating: UInt8(ascii: "."), count: 4096)
        while block.withUnsafeBytes({ write(writeFD, $0.baseAddress, $0.count) }) > 0 {}
        _ = fcntl(writeFD, F_SETFL, flags)
    }

    /// Reads, waiting, until what was read ends with `ending` (or the pipe says nothing for 10 s).
    func read(until ending: String) -> String {
        var text = ""
        var poller = pollfd(fd: readFD, events: Int16(POLLIN), revents: 0)
        while !text.hasSuffix(ending), poll(&poller, 1, 10_000) > 0 {
            text += read()
        }
        return text
    }

    /// Whatever has been written so far.
    func read() -> String {
        var out = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(readFD, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            out.append(contentsOf: chunk[0..<count])
        }
        return String(decoding: out, as: UTF8.self)
    }
}

@Suite struct LoggerTests {
    @Test func logfmtLinesQuoteWhatNeedsQuoting() {
        let output = CapturedOutput()
        let logger = Logger(sink: LogSink(fd: output.writeFD), level: .info, format: .logfmt)
        logger.info("server started", ["path": "/a b", "quote": "say \"hi\"", "plain": "x", "empty": ""])
        let line = output.read()
        #expect(line.hasSuffix("\n"))
        #expect(line.contains(" level=info msg=\"server started\" path=\"/a b\" quote=\"say \\\"hi\\\"\" plain=x empty=\"\""))
        #expect(line.hasPrefix("time=20"))
    }

    @Test func jsonLinesAreJSONObjects() throws {
        let output = CapturedOutput()
        let logger = Logger(sink: LogSink(fd: output.writeFD), level: .info, format: .json)
        logger.warn("odd\nvalue", ["key": "tab\there", "control": "\u{01}"])
        let line = output.read()
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String])
        #expect(object["level"] == "warn")
        #expect(object["msg"] == "odd\nvalue")
        #expect(object["key"] == "tab\there")
        #expect(object["control"] == "\u{01}")
        #expect(object["time"]?.hasSuffix("Z") == true)
    }

    @Test func linesBelowTheLevelAreDropped() {
        let output = CapturedOutput()
        let logger = Logger(sink: LogSink(fd: output.writeFD), level: .warn)
        logger.info("quiet")
        logger.debug("quieter")
        #expect(output.read().isEmpty)
        logger.level = .debug
        logger.debug("now heard")
        #expect(output.read().contains("msg=\"now heard\""))
    }

    @Test func batchedLinesWaitForAFullBatchOrAFlush() async throws {
        let output = CapturedOutput()
        let sink = LogSink(fd: output.writeFD, batchBytes: 100)
        sink.append { $0.append(ascii: "short line\n") }
        #expect(output.read().isEmpty) // batched
        sink.flush()
        #expect(output.read() == "short line\n")
        for _ in 0..<10 { sink.append { $0.append(ascii: "0123456789abcdef\n") } }
        // A full batch goes to the writer queue without a flush: it arrives soon after.
        var written = ""
        for _ in 0..<100 where written.count < 100 {
            written += output.read()
            if written.count < 100 { try await Task.sleep(for: .milliseconds(10)) }
        }
        #expect(written.count >= 100)
    }

    /// A line that must go at once goes to the writer at once everywhere, but only a thread
    /// that is not an event loop waits until it is written: a loop never waits on a file. The
    /// writer is held here by a full pipe; the loop's `append` returns all the same, and its
    /// line is written once the pipe is read.
    @Test func anEventLoopNeverWaitsForTheLogWriter() async throws {
        let output = CapturedOutput()
        let sink = LogSink(fd: output.writeFD, batchBytes: 1 << 20)
        // Elsewhere the caller waits: the line is there as soon as `append` returns.
        sink.append(immediately: true) { $0.append(ascii: "from a handler\n") }
        #expect(output.read() == "from a handler\n")

        output.fill()
        let loop = Thread.detachedTask {
            EventLoopThread.adopt(index: 0)
            sink.append(immediately: true) { $0.append(ascii: "from a loop\n") }
        }
        let drained = Drained()
        let returnedWhileHeld = await withTaskGroup(of: Bool.self) { group in
            group.addTask { await loop.value; return true }
            group.addTask { (try? await Task.sleep(for: .seconds(10))) == nil }
            let first = await group.next() ?? false
            group.cancelAll()
            // Reading the pipe lets the writer go on (and a loop that waited for it end).
            await Thread.detachedTask { drained.text = output.read(until: "from a loop\n") }.value
            return first
        }
        #expect(returnedWhileHeld, "an event loop waited for the log writer")
        #expect(drained.text.hasSuffix("from a loop\n")) // handed to the writer all the same
    }

    /// What a detached thread read, handed back once it ended.
    private final class Drained: @unchecked Sendable {
        var text = ""
    }

    @Test func numbersAndTimesFormatWithoutFoundation() {
        var bytes: [UInt8] = []
        bytes.append(decimal: 0)
        bytes.append(ascii: " ")
        bytes.append(decimal: -42)
        bytes.append(ascii: " ")
        bytes.append(decimal: UInt64.max)
        bytes.append(ascii: " ")
        bytes.append(fixedPoint: 1234, decimals: 3)
        bytes.append(ascii: " ")
        bytes.append(fixedPoint: 5, decimals: 3)
        bytes.append(ascii: " ")
        bytes.append(rfc3339: WallClockTime(seconds: 1_795_000_000, nanoseconds: 7_000_000))
        bytes.append(ascii: " ")
        bytes.append(hex: 0)
        bytes.append(ascii: " ")
        bytes.append(hex: 0x1f3a)
        bytes.append(ascii: " ")
        bytes.append(hex: 0xab, width: 4)
        #expect(String(decoding: bytes, as: UTF8.self) == "0 -42 18446744073709551615 1.234 0.005 2026-11-18T11:06:40.007Z 0 1f3a 00ab")
    }
}
