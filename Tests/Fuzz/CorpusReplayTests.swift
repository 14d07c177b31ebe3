import Foundation
import Testing

/// make test's part of the fuzzing: every seed of Tests/Fuzz/corpus, and every input that once
/// crashed a target (Tests/Fuzz/regressions), through its target's function, in an ordinary
/// build. A failed check there stops the process, as it stops libFuzzer; make fuzz searches
/// for new inputs (libFuzzer with ASan).
@Suite struct CorpusReplayTests {
    typealias Target = @Sendable (UnsafePointer<UInt8>, Int) -> CInt

    static let targets: [String: Target] = [
        "request-decoder": fuzzRequestDecoder, "chunked-body": fuzzChunkedBody, "header-parsers": fuzzHeaderParsers,
        "json-reader": fuzzJSONReader, "viewer-inputs": fuzzViewerInputs,
    ]
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()

    @Test(arguments: targets.keys.sorted())
    func everySeedAndRegressionPasses(_ name: String) throws {
        let target = try #require(Self.targets[name])
        var inputs: [URL] = []
        for kind in ["corpus", "regressions"] {
            let directory = Self.folder.appendingPathComponent("\(kind)/\(name)")
            inputs += (try? FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)) ?? []
        }
        #expect(!inputs.isEmpty, "no seeds for \(name)")
        for input in inputs {
            var bytes = Array(try Data(contentsOf: input))
            bytes.append(0) // a pointer for an empty input too; the count leaves it out
            let result = bytes.withUnsafeBufferPointer { target($0.baseAddress!, $0.count - 1) }
            #expect(result == 0, "\(input.lastPathComponent)")
        }
    }
}
