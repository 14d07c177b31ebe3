import Foundation
import Testing
import TestSupport
import TestTraits
@testable import NTServiceModel

@Suite(.hangGuard, .testThreads) struct ToursdConfigTests {
    @Test func defaultsAreTheEmbeddedConfiguration() throws {
        let command = try ToursdCommand.parse([])
        #expect(command == .serve(ToursdConfig()))
    }

    @Test func versionIsAskedAsAFlagOrASubcommand() throws {
        #expect(try ToursdCommand.parse(["--version"]) == .version)
        #expect(try ToursdCommand.parse(["version"]) == .version)
        #expect(try ToursdCommand.parse(["serve", "--help"]) == .help(ToursdCommand.serveUsage))
    }

    @Test func blobsCopyNamesItsBucket() throws {
        #expect(try ToursdCommand.parse(["blobs", "copy", "--to", "s3://tours/eu"]) == .copyBlobs(ToursdConfig(), .intoBucket("s3://tours/eu")))
        #expect(try ToursdCommand.parse(["blobs", "copy", "--from", "s3://tours/eu"]) == .copyBlobs(ToursdConfig(), .intoFolder("s3://tours/eu")))
        for (arguments, words) in [(["blobs", "copy"], "--to s3://"), (["blobs", "copy", "--to", "/srv/x"], "--to s3://"),
                                   (["blobs", "copy", "--from", "/srv/x"], "--from s3://"),
                                   (["blobs", "copy", "--to", "s3://a", "--from", "s3://b"], "not both"),
                                   (["blobs", "move", "--to", "s3://tours"], "unknown blobs command"), (["blobs"], "blobs needs copy")] {
            #expect { try ToursdCommand.parse(arguments) } throws: { ($0 as? ConfigError)?.message.contains(words) == true }
        }
        guard case .help(let text) = try ToursdCommand.parse(["blobs", "--help"]) else { Issue.record("no help for blobs"); return }
        #expect(text.contains("read back"))
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

    /// The README's table of settings names every key, each with the shipped file's default
    /// (an empty default is said in words there).
    @Test func theReadmeListsEveryKeyWithItsDefault() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        // The shipped file's values as written (one key a line), strings without their quotes.
        let shipped = try String(contentsOf: root.appendingPathComponent("config/toursd.json"), encoding: .utf8).split(separator: "\n")
        for key in ToursdConfig.keys {
            let row = readme.split(separator: "\n").first { $0.hasPrefix("| `\(key)` |") }
            guard let row else { Issue.record("README.md has no row for \(key)"); continue }
            let line = try #require(shipped.first { $0.contains("\"\(key)\": ") }, "config/toursd.json has no line for \(key)")
            let value = line.split(separator: ": ", maxSplits: 1).last.map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "\", ")) } ?? ""
            if !value.isEmpty { #expect(row.hasPrefix("| `\(key)` | `\(value)` |"), "\(row)") }
        }
    }

    /// The operator's files name settings that exist (the HAProxy file named `maxUploadBytes`,
    /// which is none), and the scale-out file sets keys toursd reads.
    @Test func theConfigFolderNamesOnlySettingsThatExist() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let keys = Set(ToursdConfig.keys)
        let settingLike = try Regex("\\b(max|min)?[a-z]+(?:[A-Z][a-z0-9]*)+(Seconds|Ms|Bytes|File|Dir|Url|Size|Limit|Proxies|Store|Responses)\\b")
        for file in ["config/haproxy/toursd.cfg", "config/nginx/toursd-proxy.conf", "config/nginx/toursd-upstreams.conf", "config/toursd.environment",
                     "config/toursd.service", "docs/scale-out.md"] {
            let text = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
            for match in text.matches(of: settingLike) where !keys.contains(String(match.output[0].substring ?? "")) {
                Issue.record("\(file) names \(match.output[0].substring ?? ""), which is not a setting")
            }
        }
        let scaleOut = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: root.appendingPathComponent("config/toursd-scale-out.json"))) as? [String: Any])
        #expect(Set(scaleOut.keys).isSubset(of: keys), "\(Set(scaleOut.keys).subtracting(keys))")
        #expect(scaleOut["webhookKeyFile"] as? String != nil && scaleOut["metricsTokenFile"] as? String != nil)
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

    @Test func theEnvironmentSetsAnyKeyOverTheFileAndUnderTheFlags() throws {
        let environment = ["TOURSD_maxConnections": "9", "TOURSD_logLevel": "debug", "TOURSD_port": "7000", "TOURSD_UNRELATED": "x",
                           "TOURSD_CONFIG": "from-env.json"]
        var read: String?
        let command = try ToursdCommand.parse(["--port", "0"], environment: environment) { path, config throws(ConfigError) in
            read = path
            try config.apply(json: Data(#"{"maxConnections": 5, "idleTimeoutMs": 1234}"#.utf8), source: path)
        }
        var expected = ToursdConfig()
        expected.maxConnections = 9 // the environment over the file
        expected.idleTimeoutMs = 1234 // the file over the defaults
        expected.logLevel = "debug"
        expected.port = 0 // the flag over the environment
        #expect(command == .serve(expected))
        #expect(read == "from-env.json") // $TOURSD_CONFIG when there is no --config
    }

    @Test func aBadValueInTheEnvironmentNamesItsVariable() {
        let error = #expect(throws: ConfigError.self) { try ToursdCommand.parse([], environment: ["TOURSD_maxConnections": "many"]) }
        #expect(error?.message == "TOURSD_maxConnections: invalid value \"many\" for maxConnections")
    }

    @Test func checkConfigTakesTheServeOptionsAndListsEveryKey() throws {
        let command = try ToursdCommand.parse(["check-config", "--port", "81"])
        var expected = ToursdConfig()
        expected.port = 81
        #expect(command == .checkConfig(expected, ConfigCheck(sources: ["port": "the command line"])))
        let running = try ToursdCommand.parse(["check-config", "--no-bind"], environment: ["TOURSD_logLevel": "warn"])
        guard case .checkConfig(_, let check) = running else { Issue.record("\(running)"); return }
        #expect(!check.bind && check.sources == ["logLevel": "TOURSD_logLevel"])
        #expect(expected.values.map(\.key) == ToursdConfig.keys)
        #expect(ToursdConfig.liveKeys.isSubset(of: Set(ToursdConfig.keys))) // what a reload applies is configurable
        #expect(expected.values.first { $0.key == "port" }?.value == "81")
        #expect(expected.values.allSatisfy { !$0.value.isEmpty || ["logFile", "migrationsDir", "publicUrl", "viewerSubtitle", "publicPlatformName", "databaseUrl", "blobDir", "s3Endpoint", "trustedProxies", "webhookKeyFile", "metricsTokenFile", "otlpEndpoint"].contains($0.key) })
        // empty: stderr, built in, the request's Host, the tenant's name, SQLite, <dataDir>/blobs, no proxy, beside the data
    }

    @Test func migrateTakesStatusAndAFolder() throws {
        var folder = ToursdConfig()
        folder.migrationsDir = "/srv/fix"
        #expect(try ToursdCommand.parse(["migrate", "--status"]) == .migrate(ToursdConfig(), status: true))
        #expect(try ToursdCommand.parse(["migrate", "--migrations-dir", "/srv/fix"]) == .migrate(folder, status: false))
        #expect(throws: ConfigError.self) { try ToursdCommand.parse(["serve", "--status"]) }
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
        (#"{"databaseReadPipelines": 1}"#, "databaseReadPipelines is no longer a configuration key: each request handler thread"),
        (#"{"eventLoop": "dispatch"}"#, "eventLoop is no longer a configuration key: toursd watches its sockets with epoll only"),
        (#"{"logLevel": "loud"}"#, "invalid value \"loud\" for logLevel"),
        (#"{"maxConnections": true}"#, "invalid value \"true\" for maxConnections"),
        (#"{"resumableInterimResponses": 1}"#, "invalid value \"1\" for resumableInterimResponses"),
        (#"{"maxConnections": [1]}"#, "maxConnections must be a string, a number or a boolean"),
        (#"[1, 2]"#, "must hold a JSON object"),
        (#"{"port": "#, "is not valid JSON"),
    ])
    func badFilesSayWhatIsWrong(json: String, message: String) {
        var config = ToursdConfig()
        let error = #expect(throws: ConfigError.self) { try config.apply(json: Data(json.utf8), source: "c.json") }
        #expect(error?.message.contains(message) == true, "\(error?.message ?? "")")
        #expect(config == ToursdConfig()) // nothing half-applied from a bad value
    }

    /// The share lifetimes' relation is checked once every source is applied, whatever the
    /// order of the keys: a file lowering both is fine, one with min over max says so.
    @Test func shareLifetimesAreCheckedTogether() throws {
        let both = try ToursdCommand.parse(["check-config"], environment: ["TOURSD_shareMinSeconds": "60", "TOURSD_shareMaxSeconds": "1800"])
        guard case .checkConfig(let config, _) = both else { Issue.record("\(both)"); return }
        #expect(config.shareMinSeconds == 60 && config.shareMaxSeconds == 1800)
        // The default lifetime (30 days) past the range: a link made without one gets the longest.
        #expect(config.shareLifetime == 1800)
        #expect(throws: ConfigError.self) {
            try ToursdCommand.parse(["check-config"], environment: ["TOURSD_shareMinSeconds": "7200", "TOURSD_shareMaxSeconds": "3600"])
        }
    }
}
