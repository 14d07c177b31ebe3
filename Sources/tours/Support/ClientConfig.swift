import Foundation
import NoughtyTours

/// What `tours init` keeps: the server, its token, local storage, and how the queue sends.
/// A JSON file, readable by its owner only (it holds the token): `--config PATH`, else
/// `$TOURS_CONFIG`, else `$XDG_CONFIG_HOME/tours/config.json` (`~/.config/tours/config.json`).
struct ClientConfig {
    var server: URL
    var token: String
    var storage: URL
    /// Optional keys of the file, in milliseconds or counts: concurrentTransfers,
    /// initialBackoffMs, maxBackoffMs, connectTimeoutMs, lowSpeedTimeMs, resumableThreshold,
    /// maxSendBytesPerSecond (a station on a shared link), and pruneUploadedAfterDays (below).
    var sync = SyncOptions()
    /// `pruneUploadedAfterDays`: the local copy of a panorama goes this long after its upload
    /// (`tours sync` prunes); nil (a negative number in the file) keeps them.
    var pruneUploadedAfter: Duration? = .seconds(7 * 86_400)

    static func path(_ explicit: String?) -> String {
        if let explicit { return explicit }
        let environment = ProcessInfo.processInfo.environment
        if let path = environment["TOURS_CONFIG"], !path.isEmpty { return path }
        return (nonEmpty("XDG_CONFIG_HOME") ?? home + "/.config") + "/tours/config.json"
    }

    /// Where local storage goes unless `init --storage` says otherwise.
    static var defaultStorage: URL {
        URL(fileURLWithPath: (nonEmpty("XDG_DATA_HOME") ?? home + "/.local/share") + "/tours")
    }

    /// `$HOME`, as every command line tool takes it; the account's home when it is unset.
    private static var home: String { nonEmpty("HOME") ?? NSHomeDirectory() }

    private static func nonEmpty(_ name: String) -> String? {
        ProcessInfo.processInfo.environment[name].flatMap { $0.isEmpty ? nil : $0 }
    }

    static func load(_ path: String) throws(CLIError) -> ClientConfig {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw .notConfigured("no configuration at \(path): run tours init --server URL --token-file FILE first")
        }
        guard let json = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any],
              let server = (json["server"] as? String).flatMap(URL.init(string:)), let token = json["token"] as? String,
              let storage = json["storage"] as? String else {
            throw .notConfigured("\(path) is not a tours configuration (server, token, storage): run tours init again")
        }
        var config = ClientConfig(server: server, token: token, storage: URL(fileURLWithPath: storage))
        let number = { (key: String) in (json[key] as? NSNumber)?.intValue }
        if let value = number("concurrentTransfers") { config.sync.concurrentTransfers = value }
        if let value = number("initialBackoffMs") { config.sync.initialBackoff = .milliseconds(value) }
        if let value = number("maxBackoffMs") { config.sync.maxBackoff = .milliseconds(value) }
        if let value = number("connectTimeoutMs") { config.sync.connectTimeout = .milliseconds(value) }
        if let value = number("lowSpeedTimeMs") { config.sync.lowSpeedTime = .milliseconds(value) }
        if let value = number("resumableThreshold") { config.sync.resumableThreshold = Int64(value) }
        if let value = number("maxSendBytesPerSecond") { config.sync.maxSendBytesPerSecond = Int64(value) }
        if let days = (json["pruneUploadedAfterDays"] as? NSNumber)?.doubleValue {
            config.pruneUploadedAfter = days < 0 ? nil : .seconds(days * 86_400)
        }
        return config
    }

    /// Writes the file (mode 0600, its directory made), keeping keys it does not manage.
    func save(_ path: String) throws(CLIError) {
        var json = (FileManager.default.contents(atPath: path).flatMap { try? JSONSerialization.jsonObject(with: $0) } as? [String: Any]) ?? [:]
        json["server"] = server.absoluteString
        json["token"] = token
        json["storage"] = storage.path
        do {
            // A bare file name is in the current directory: nothing to create.
            let directory = (path as NSString).deletingLastPathComponent
            if !directory.isEmpty { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) }
            let data = try JSONSerialization.data(withJSONObject: json, options: [.prettyPrinted, .sortedKeys])
            guard FileManager.default.createFile(atPath: path, contents: data, attributes: [.posixPermissions: 0o600]) else {
                throw CocoaError(.fileWriteNoPermission)
            }
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        } catch {
            throw .notConfigured("cannot write \(path): \(error.localizedDescription)")
        }
    }

    /// The library on this configuration's storage.
    func open() async throws(CLIError) -> NoughtyTours {
        try await library { () async throws(NoughtyToursError) in
            try await NoughtyTours(configuration: Configuration(server: server, token: token, storageDirectory: storage, sync: sync))
        }
    }
}
