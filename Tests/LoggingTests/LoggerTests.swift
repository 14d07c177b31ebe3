#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
@testable import NTLogging

/// Captures what a sink writes, through a pipe.
final class CapturedOutput {
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
