import Foundation
import Testing
@testable import TourService

@Suite struct ToursdConfigTests {
    @Test func defaultsAreTheEmbeddedConfiguration() throws {
        let command = try ToursdCommand.parse([])
        #expect(command == .serve(ToursdConfig()))
    }

    @Test func theShippedConfigFileHoldsEveryKeyWithTheEmbeddedDefaults() throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("config/toursd.json").path
        let data = try #require(FileManager.default.contents(atPath: path))
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(object.keys.sorted() == ToursdConfig.keys)
        var config = ToursdConfig()
        try config.apply(json: data, source: path)
        #expect(config == ToursdConfig())
    }

    @Test func flagsOverrideTheFile() throws {
        let command = try ToursdCommand.parse(["serve", "--config", "x.json", "--port", "0", "--host", "::1", "--data-dir", "/tmp/d"]) { _, config throws(ConfigError) in
            try config.apply(json: Data(#"{"port": 9000, "host": "0.0.0.0", "maxConnections": 7}"#.utf8), source: "x.json")
        }
        var expected = ToursdConfig()
        expected.port = 0
        expected.host = "::1"
        expected.dataDir = "/tmp/d"
        expected.maxConnections = 7
        #expect(command == .serve(expected))
    }

    @Test func helpOnEverySubcommand() throws {
        guard case .help(let text) = try ToursdCommand.parse(["--help"]) else { Issue.record("no help"); return }
        #expect(text.contains("--port"))
        guard case .help = try ToursdCommand.parse(["serve", "--help"]) else { Issue.record("no help for serve"); return }
    }

    @Test(arguments: [
        (["--port", "70000"], "invalid value \"70000\" for port"),
        (["--port"], "--port needs a value"),
        (["--bogus"], "unknown option --bogus"),
        (["frobnicate"], "unknown subcommand \"frobnicate\""),
    ])
    func badArgumentsSayWhatIsWrong(arguments: [String], message: String) {
        let error = #expect(throws: ConfigError.self) { try ToursdCommand.parse(arguments) }
        #expect(error?.message.contains(message) == true, "\(error?.message ?? "")")
    }

    @Test(arguments: [
        (#"{"port": "eighty"}"#, "invalid value \"eighty\" for port"),
        (#"{"prot": 80}"#, "unknown configuration key \"prot\""),
        (#"{"logLevel": "loud"}"#, "invalid value \"loud\" for logLevel"),
        (#"{"maxConnections": true}"#, "maxConnections must be a string or a number"),
        (#"[1, 2]"#, "must hold a JSON object"),
        (#"{"port": "#, "is not valid JSON"),
    ])
    func badFilesSayWhatIsWrong(json: String, message: String) {
        var config = ToursdConfig()
        let error = #expect(throws: ConfigError.self) { try config.apply(json: Data(json.utf8), source: "c.json") }
        #expect(error?.message.contains(message) == true, "\(error?.message ?? "")")
        #expect(config == ToursdConfig()) // nothing half-applied from a bad value
    }
}
