#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TestSupport

/// The built `tours` command line, as scripts run it: from `tours init` to a synced property,
/// `--json` parsed, and the exit codes `tours --help` documents.
@Suite(.serialized, .timeLimit(.minutes(3))) struct ToursCLITests {
    private let work = testDirectory("tours-cli")
    private var config: String { work.appendingPathComponent("tours.json").path }

    /// Runs tours with this test's configuration.
    private func tours(_ arguments: String...) throws -> (status: Int32, out: String, err: String) {
        try tours(config: config, arguments)
    }

    private func tours(config: String, _ arguments: [String]) throws -> (status: Int32, out: String, err: String) {
        try runCommand(ToursdProcess.builtExecutable("tours").path, ["--config", config] + arguments)
    }

    private func json(_ text: String) throws -> [String: Any] {
        let line = try #require(text.split(separator: "\n").last.map(String.init))
        return try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }

    private func file(_ name: String, bytes: Int) throws -> String {
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        let path = work.appendingPathComponent(name).path
        try Data(ImageSignature.stamped((0..<bytes).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ bytes) }, as: name)).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// `tours init` against `server`, with backoff in milliseconds for the tests.
    private func initialize(_ server: URL, token: String, config: String? = nil, storage: String = "storage") throws {
        let config = config ?? self.config
        let result = try tours(config: config, ["init", "--server", server.absoluteString, "--token", token, "--storage", work.appendingPathComponent(storage).path])
        #expect(result.status == 0, "\(result.err)")
        var saved = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: config))) as? [String: Any])
        #expect(saved["token"] as? String == token)
        #expect((try FileManager.default.attributesOfItem(atPath: config)[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        saved["initialBackoffMs"] = 5
        saved["maxBackoffMs"] = 20
        try JSONSerialization.data(withJSONObject: saved).write(to: URL(fileURLWithPath: config))
    }

    @Test func aScriptedSessionFromInitToASyncedPropertyWithPanoramas() throws {
        let server = try LiveServer()
        defer { server.stop() }
        try initialize(server.url, token: server.token)
        let created = try tours("property", "create", "Villa CLI", "--floors", "2", "--meta", "ref=C-1", "--json")
        #expect(created.status == 0)
        let property = try #require(try json(created.out)["id"] as? String)
        let plan = try file("plan.json", bytes: 0)
        try #"{"rooms": [{"name": "Kitchen", "outline": [[0,0],[4,0],[4,3]], "height": 2.5}, {"name": "Hall", "outline": [[4,0],[8,0],[8,3]]}]}"#
            .write(toFile: plan, atomically: true, encoding: .utf8)
        let planned = try tours("plan", property, plan, "--floor", "0", "--worldmap", try file("map.bin", bytes: 4_000), "--json")
        #expect(planned.status == 0, "\(planned.err)")
        let kitchen = try #require((try json(planned.out)["rooms"] as? [[String: Any]])?.first { $0["name"] as? String == "Kitchen" }?["id"] as? String)
        #expect(try tours("panorama", "add", property, try file("a.jpg", bytes: 70_000), try file("b.png", bytes: 50_000),
                          "--floor", "0", "--room", kitchen).status == 0)
        #expect(try tours("worldmap", property, try file("map1.bin", bytes: 3_000), "--floor", "1").status == 0)
        #expect(try tours("panorama", "add", property, try file("c.heic", bytes: 30_000), "--floor", "1").status == 0)

        let synced = try tours("sync", "--json")
        #expect(synced.status == 0, "\(synced.err)")
        #expect(try json(synced.out)["queued"] as? Int == 0)
        let status = try json(try tours("status", property, "--json").out)
        #expect(status["sync"] as? String == "synced")
        #expect(status["isComplete"] as? Bool == true)
        #expect(status["panoramasUploaded"] as? Int == 3 && status["roomCount"] as? Int == 2)
        let tourId = try #require(status["tourId"] as? String)
        #expect(try server.json("/v1/properties/\(property)")["tourId"] as? String == tourId)
        #expect(try server.json("/v1/properties/\(property)/status")["panoramaCount"] as? Int == 3)

        let shown = try json(try tours("property", "show", property, "--json").out)
        let floors = try #require(shown["floors"] as? [[String: Any]])
        #expect(floors.map { $0["continuable"] as? Bool } == [true, false]) // floor 1 has a map but no plan
        let listed = try json(try tours("property", "list", "--json").out)
        #expect((listed["properties"] as? [[String: Any]])?.count == 1)
        // Plain output, not a terminal: lines a log keeps.
        let plain = try tours("status", property)
        #expect(plain.out.contains("synced") && plain.out.contains(tourId))

        #expect(try tours("property", "delete", property).status == 0)
        #expect(try tours("sync").status == 0)
        #expect(try RawClient(port: server.port).request("GET", "/v1/properties/\(property)", headers: ["Authorization": "Bearer \(server.token)"]).status == 404)
    }

    @Test func badInputHasTheExitCodesTheHelpDocuments() throws {
        #expect(try tours("property", "list").status == 3) // not configured yet
        let server = try LiveServer()
        defer { server.stop() }
        try initialize(server.url, token: server.token)
        let created = try tours("property", "create", "Codes")
        let property = created.out.trimmingCharacters(in: .whitespacesAndNewlines)
        // Each code below is for the reason named, not because the property is missing.
        try #require(created.status == 0 && UUID(uuidString: property) != nil, "\(created.err)")
        #expect(try tours("status", property).status == 0)
        #expect(try tours("status", "00000000-0000-4000-8000-000000000000").status == 4) // unknown property
        #expect(try tours("plan", property, "--floor", "7", try file("p.json", bytes: 10)).status == 4) // no floor 7
        let badPlan = try tours("plan", property, try file("bad.json", bytes: 100))
        #expect(badPlan.status == 5)
        #expect(badPlan.err.contains("is not a plan"))
        for (name, text) in [("height.json", #"{"rooms": [{"outline": [[0,0],[1,0],[1,1]], "height": "tall"}]}"#),
                             ("outline.json", #"{"rooms": [{"outline": [[0,0],[1,"x"],[1,1]]}]}"#)] {
            let path = try file(name, bytes: 0)
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            let refused = try tours("plan", property, path)
            #expect(refused.status == 5 && refused.err.contains("not a number"), "\(name): \(refused.err)") // not dropped
        }
        #expect(try tours("panorama", "add", property, work.appendingPathComponent("missing.jpg").path).status == 5) // unreadable
        #expect(try tours("panorama", "add", property, try file("notes.txt", bytes: 10)).status == 5) // not an image type
        let plan = try file("empty-plan.json", bytes: 0)
        try #"{"rooms": []}"#.write(toFile: plan, atomically: true, encoding: .utf8)
        #expect(try tours("plan", property, plan, "--mode", "continueScan").status == 5) // not continuable
        #expect(try tours("property", "create").status == 2) // no name
        #expect(try tours("frobnicate").status == 2)
        #expect(try tours("--help").status == 0)
        #expect(try tours("--help").out.contains("exit codes"))
    }

    @Test func withTheServerDownSyncExitsSixAndKeepsTheWorkUntilTheServerIsBack() throws {
        let dataDir = testDirectory("toursd").path
        let first = try LiveServer(dataDir: dataDir)
        let token = first.token
        first.stop()
        let down = try PortReservation() // refused, and no other test's server gets it
        try initialize(URL(string: "http://127.0.0.1:\(down.port)")!, token: token)
        let property = try tours("property", "create", "Offline", "--floors", "1").out.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try tours("panorama", "add", property, try file("o.jpg", bytes: 20_000)).status == 0)
        let offline = try tours("sync")
        #expect(offline.status == 6)
        #expect(offline.err.contains("stayed queued"))
        #expect(try json(try tours("status", property, "--json").out)["sync"] as? String == "failed")

        down.release()
        let second = try LiveServer(dataDir: dataDir, port: down.port)
        defer { second.stop() }
        #expect(try tours("sync").status == 0)
        let status = try json(try tours("status", property, "--json").out)
        #expect(status["isComplete"] as? Bool == true)
    }

    @Test func statusWatchFollowsTheUploadLiveUntilTheTourIsComplete() throws {
        let server = try LiveServer()
        defer { server.stop() }
        try initialize(server.url, token: server.token)
        let property = try tours("property", "create", "Watched", "--floors", "1").out.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try tours("panorama", "add", property, try file("w1.jpg", bytes: 40_000), try file("w2.jpg", bytes: 60_000)).status == 0)
        let watched = try tours("status", property, "--watch", "--json")
        #expect(watched.status == 0, "\(watched.err)")
        let values = try watched.out.split(separator: "\n").map { try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
        #expect(values.first?["sync"] as? String == "pending")
        #expect(values.last?["isComplete"] as? Bool == true)
        #expect(values.compactMap { $0["panoramasUploaded"] as? Int } == values.compactMap { $0["panoramasUploaded"] as? Int }.sorted())
    }

    /// On a terminal (a pty, through script(1)), sync draws a bar: items, bytes, rate.
    @Test func syncOnATerminalShowsAProgressBar() throws {
        let server = try LiveServer()
        defer { server.stop() }
        try initialize(server.url, token: server.token)
        let property = try tours("property", "create", "Terminal").out.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try tours("panorama", "add", property, try file("t1.jpg", bytes: 900_000), try file("t2.jpg", bytes: 700_000)).status == 0)
        let command = [ToursdProcess.builtExecutable("tours").path, "--config", config, "sync"].joined(separator: " ")
        let shown = try runCommand("/usr/bin/script", ["-qec", command, "/dev/null"])
        #expect(shown.status == 0, "\(shown.out)")
        #expect(shown.out.contains("\r\u{1B}[K[")) // redrawn in place
        #expect(shown.out.contains("4/4 items") && shown.out.contains("1.6 MB/1.6 MB") && shown.out.contains("MB/s"))
        #expect(!shown.out.contains("uploaded panorama")) // the plain lines are for logs
    }

    /// A second station: lists the server's properties, downloads one and can continue its
    /// floor; `tours status` names a failed upload with its error and whether it retries.
    @Test func anotherStationListsDownloadsAndIsToldWhyAnUploadFailed() throws {
        let server = try LiveServer()
        defer { server.stop() }
        try initialize(server.url, token: server.token)
        let property = try tours("property", "create", "Shared").out.trimmingCharacters(in: .whitespacesAndNewlines)
        let plan = try file("shared-plan.json", bytes: 0)
        try #"{"rooms": [{"name": "Kitchen", "outline": [[0,0],[4,0],[4,3]], "capture": {"walls": [1, 2]}}], "structure": {"v": 1}}"#
            .write(toFile: plan, atomically: true, encoding: .utf8)
        #expect(try tours("plan", property, plan, "--worldmap", try file("shared-map.bin", bytes: 2_000)).status == 0)
        #expect(try tours("sync").status == 0)

        let second = work.appendingPathComponent("second.json").path
        try initialize(server.url, token: server.token, config: second, storage: "second-storage")
        let listed = try tours(config: second, ["property", "list", "--remote", "--json"])
        #expect(listed.status == 0, "\(listed.err)")
        #expect((try json(listed.out)["properties"] as? [[String: Any]])?.map { $0["id"] as? String } == [property])
        #expect(try tours(config: second, ["property", "list", "--remote"]).out.contains("\(property)  Shared  floors 1"))
        let downloaded = try tours(config: second, ["property", "download", property, "--json"])
        #expect(downloaded.status == 0, "\(downloaded.err)")
        let result = try json(downloaded.out)
        #expect((result["status"] as? [String: Any])?["isComplete"] as? Bool == true)
        #expect(result["continuableFloors"] as? [Int] == [0])
        #expect(try tours(config: second, ["property", "download", UUID().uuidString.lowercased()]).status == 4)

        // The property is deleted on the server; the second station's new plan is refused.
        #expect(try RawClient(port: server.port).request("DELETE", "/v1/properties/\(property)", headers: ["Authorization": "Bearer \(server.token)"]).status == 204)
        #expect(try tours(config: second, ["plan", property, plan, "--mode", "continueScan"]).status == 0)
        #expect(try tours(config: second, ["sync"]).status == 6)
        let status = try tours(config: second, ["status", property])
        #expect(status.out.contains("plan "), "\(status.out)")
        #expect(status.out.contains("the server answered 404 not_found") && status.out.contains("will not retry: run tours sync"), "\(status.out)")
        let failures = try #require(try json(try tours(config: second, ["status", property, "--json"]).out)["failures"] as? [[String: Any]])
        #expect(failures.map { $0["kind"] as? String } == ["plan"])
        #expect(failures.first?["willRetry"] as? Bool == false)
    }

    /// `--config tours.json`: a configuration file named relative to the current directory.
    @Test func aRelativeConfigPathIsWrittenAndRead() throws {
        let server = try LiveServer()
        defer { server.stop() }
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        let tours = ToursdProcess.builtExecutable("tours").path
        let initialized = try runCommand(tours, ["--config", "relative.json", "init", "--server", server.url.absoluteString, "--token", server.token,
                                                 "--storage", "relative-storage"], workingDirectory: work)
        #expect(initialized.status == 0, "\(initialized.err)")
        #expect(FileManager.default.fileExists(atPath: work.appendingPathComponent("relative.json").path))
        #expect(try runCommand(tours, ["--config", "relative.json", "property", "list"], workingDirectory: work).status == 0)
    }
}
