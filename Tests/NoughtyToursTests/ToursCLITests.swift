#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TestSupport
import TestTraits

/// The built `tours` command line, as scripts run it: from `tours init` to a synced property,
/// `--json` parsed, and the exit codes `tours --help` documents.
@Suite(.serialized, .hangGuard, .testThreads) struct ToursCLITests {
    private let work = testDirectory("tours-cli")
    private var config: String { work.appendingPathComponent("tours.json").path }

    /// Runs tours with this test's configuration.
    private func tours(_ arguments: String...) throws -> (status: Int32, out: String, err: String) {
        try tours(config: config, arguments)
    }

    private func tours(config: String, _ arguments: [String], stdin: String? = nil) throws -> (status: Int32, out: String, err: String) {
        try runCommand(ToursdProcess.builtExecutable("tours").path, ["--config", config] + arguments, stdin: stdin)
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

    /// `tours init` against `server`, with backoff in milliseconds for the tests; `offline`:
    /// without asking the server (one that is down).
    private func initialize(_ server: URL, token: String, config: String? = nil, storage: String = "storage", offline: Bool = false) throws {
        let config = config ?? self.config
        let result = try tours(config: config, ["init", "--server", server.absoluteString, "--token", token, "--storage", work.appendingPathComponent(storage).path]
                               + (offline ? ["--offline"] : []))
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
        let placed = try tours("panorama", "add", property, try file("c.heic", bytes: 30_000), "--floor", "1", "--at", "2.5,1.5,-90", "--json")
        #expect(placed.status == 0, "\(placed.err)")

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
        let placedId = try #require((try json(placed.out)["panoramas"] as? [String])?.first, "\(placed.out)")
        let position = try server.json("/v1/panoramas/\(placedId)")["position"] as? [String: Any]
        #expect(position?["x"] as? Double == 2.5 && position?["y"] as? Double == 1.5 && position?["heading"] as? Double == 270)

        let shown = try json(try tours("property", "show", property, "--json").out)
        let floors = try #require(shown["floors"] as? [[String: Any]])
        #expect(floors.map { $0["continuable"] as? Bool } == [true, false]) // floor 1 has a map but no plan
        let listed = try json(try tours("property", "list", "--json").out)
        #expect((listed["properties"] as? [[String: Any]])?.count == 1)
        // Plain output, not a terminal: lines a log keeps.
        let plain = try tours("status", property)
        #expect(plain.out.contains("synced") && plain.out.contains(tourId))

        #expect(try tours("property", "delete", property, "--yes").status == 0)
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
        #expect(try tours("panorama", "add", property, try file("at.jpg", bytes: 100), "--at", "1").status == 2) // X,Y at least
        let heading = try tours("panorama", "add", property, try file("at.jpg", bytes: 100), "--at", "1,1,400")
        #expect(heading.status == 5 && heading.err.contains("heading must be"), "\(heading.err)") // past 360°
        #expect(try tours("panorama", "add", property, try file("at1.jpg", bytes: 100), try file("at2.jpg", bytes: 100), "--at", "1,1").status == 2)
        #expect(try json(try tours("status", property, "--json").out)["panoramaCount"] as? Int == 0) // none of them added
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
        try initialize(URL(string: "http://127.0.0.1:\(down.port)")!, token: token, offline: true)
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
        // Refused for a reason retrying cannot fix: exit 7, with what to do.
        let refused = try tours(config: second, ["sync"])
        #expect(refused.status == 7 && refused.err.contains("the server no longer has what it belongs to"), "\(refused.err)")
        let status = try tours(config: second, ["status", property])
        #expect(status.out.contains("plan "), "\(status.out)")
        #expect(status.out.contains("the server answered 404 not_found") && status.out.contains("retrying will not help"), "\(status.out)")
        let failures = try #require(try json(try tours(config: second, ["status", property, "--json"]).out)["failures"] as? [[String: Any]])
        #expect(failures.map { $0["kind"] as? String } == ["plan"])
        #expect(failures.first?["willRetry"] as? Bool == false)
    }

    /// The office station makes a grant for one property; the capture device keeps it with
    /// `tours init --token-file -` and sees, and syncs to, that property only.
    @Test func aGrantMadeOnOneStationIsAnotherStationsOnlyKey() throws {
        let server = try LiveServer()
        defer { server.stop() }
        try initialize(server.url, token: server.token)
        let granted = try tours("property", "create", "Granted").out.trimmingCharacters(in: .whitespacesAndNewlines)
        let other = try tours("property", "create", "Other").out.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try tours("sync").status == 0)
        let made = try tours("grant", "create", granted, "--scope", "capture", "--expires", "8h")
        #expect(made.status == 0 && made.err.contains("the token is shown only now"), "\(made.err)")
        let token = made.out.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(token.hasPrefix("ntg_") && !token.contains("\n"))
        #expect(try tours("grant", "create", granted, "--expires", "8 hours").status == 2)

        let device = work.appendingPathComponent("device.json").path
        let initialized = try tours(config: device, ["init", "--server", server.url.absoluteString, "--token-file", "-", "--storage",
                                                     work.appendingPathComponent("device-storage").path], stdin: try input(token + "\n"))
        #expect(initialized.status == 0, "\(initialized.err)")
        let listed = try json(try tours(config: device, ["property", "list", "--remote", "--json"]).out)
        #expect((listed["properties"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == [granted], "\(listed)")
        #expect(try tours(config: device, ["property", "download", other]).status == 4)
        // A grant cannot make grants: the server's refusal, exit 1 with its reason.
        let refused = try tours(config: device, ["grant", "create", granted])
        #expect(refused.status == 1 && refused.err.contains("403 forbidden") && refused.err.contains("tenant token"), "\(refused.err)")
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

    /// A file holding `text`, for a command's standard input.
    private func input(_ text: String) throws -> String {
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        let path = work.appendingPathComponent("stdin-\(UUID().uuidString)").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// The shipped example, a real 2048×1024 JPEG.
    private var example: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../examples/pano.jpg").standardized.path
    }

    /// Help for each command, from `tours help COMMAND` and `tours COMMAND --help` alike, and
    /// the release from both binaries.
    @Test func eachCommandHasItsOwnHelpAndBothBinariesTheirVersion() throws {
        let panorama = try tours("help", "panorama")
        #expect(panorama.status == 0 && panorama.out.hasPrefix("usage: tours panorama add") && !panorama.out.contains("exit codes"))
        #expect(try tours("panorama", "add", "--help").out == panorama.out)
        #expect(try tours("property", "delete", "--help").out.contains("--yes"))
        #expect(try tours("queue", "--help").out.contains("tours queue drop ITEM"))
        let unknown = try tours("help", "frobnicate")
        #expect(unknown.status == 2 && unknown.err.contains("the commands are"))
        let overview = try tours("help")
        #expect(overview.status == 0 && overview.out.contains("exit codes") && overview.out.contains("7  refused"))
        let version = try tours("--version")
        #expect(version.status == 0 && version.out.hasPrefix("tours ") && version.out.split(separator: " ").count == 2)
        let daemon = try runCommand(ToursdProcess.executable.path, ["--version"])
        #expect(daemon.status == 0 && daemon.out == version.out.replacingOccurrences(of: "tours ", with: "toursd "))
    }

    /// A file is taken as a panorama by its content, not its name; a refusal says why and adds
    /// nothing, not even the good images beside it.
    @Test func imagesAreCheckedByTheirContentBeforeAnythingIsAdded() throws {
        let server = try LiveServer()
        defer { server.stop() }
        try initialize(server.url, token: server.token)
        let property = try tours("property", "create", "Checked").out.trimmingCharacters(in: .whitespacesAndNewlines)
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        let readme = work.appendingPathComponent("readme.jpg").path
        try "# NoughtyTours\nnot an image\n".write(toFile: readme, atomically: true, encoding: .utf8)
        let empty = work.appendingPathComponent("empty.jpg").path
        #expect(FileManager.default.createFile(atPath: empty, contents: Data()))
        let random = work.appendingPathComponent("random.jpg").path
        try Data((0..<50_000).map { UInt8(truncatingIfNeeded: $0 &* 7919 &+ 13) }).write(to: URL(fileURLWithPath: random))
        let misnamed = try file("really-a-png.jpg.png", bytes: 2_000)
        let renamed = work.appendingPathComponent("png.jpg").path
        try FileManager.default.moveItem(atPath: misnamed, toPath: renamed)
        for (path, reason) in [(readme, "is not a JPEG, HEIC or PNG image (it starts with hex 23204e6f75676874)"), (empty, "is empty"),
                               (random, "is not a JPEG, HEIC or PNG image"), (renamed, "holds a PNG image, but its name says JPEG")] {
            let refused = try tours("panorama", "add", property, example, path)
            #expect(refused.status == 5 && refused.err.contains(reason), "\(path): \(refused.err)")
        }
        #expect(try json(try tours("status", property, "--json").out)["panoramaCount"] as? Int == 0)
        let added = try tours("panorama", "add", property, example)
        #expect(added.status == 0 && added.out.contains("2048×1024 JPEG"), "\(added.err)")
    }

    /// What was not found is named, with where it was looked for; a room is found on its own
    /// floor without --floor.
    @Test func notFoundNamesWhatAndWhereAndARoomBringsItsFloor() throws {
        let server = try LiveServer()
        defer { server.stop() }
        try initialize(server.url, token: server.token)
        let property = try tours("property", "create", "Named", "--floors", "2").out.trimmingCharacters(in: .whitespacesAndNewlines)
        let missing = "00000000-0000-4000-8000-000000000000"
        let noProperty = try tours("status", missing)
        #expect(noProperty.status == 4 && noProperty.err.contains("no property \(missing) in local storage"))
        let noFloor = try tours("panorama", "add", property, example, "--floor", "7")
        #expect(noFloor.status == 4 && noFloor.err.contains("has no floor 7: its floors are 0, 1"), "\(noFloor.err)")
        let noRooms = try tours("panorama", "add", property, example, "--room", "r1")
        #expect(noRooms.status == 4 && noRooms.err.contains("it has no rooms yet"), "\(noRooms.err)")
        let plan = try file("upstairs.json", bytes: 0)
        try #"{"rooms": [{"name": "Attic", "outline": [[0,0],[3,0],[3,3]]}]}"#.write(toFile: plan, atomically: true, encoding: .utf8)
        let planned = try tours("plan", property, plan, "--floor", "1")
        #expect(planned.out.contains("floor 1 has 1 room: "), "\(planned.out)")
        let attic = try #require((try json(try tours("plan", property, plan, "--floor", "1", "--json").out)["rooms"] as? [[String: Any]])?.first?["id"] as? String)
        let wrong = try tours("panorama", "add", property, example, "--room", "nope")
        #expect(wrong.status == 4 && wrong.err.contains("no room nope on property \(property): its rooms are \(attic) Attic (floor 1)"), "\(wrong.err)")
        let onFloor0 = try tours("panorama", "add", property, example, "--room", attic, "--floor", "0")
        #expect(onFloor0.status == 4 && onFloor0.err.contains("no room \(attic) on floor 0"), "\(onFloor0.err)")
        let inAttic = try tours("panorama", "add", property, example, "--room", "attic", "--json") // by its name
        #expect(inAttic.status == 0, "\(inAttic.err)")
        let floors = try #require(try json(try tours("property", "show", property, "--json").out)["floors"] as? [[String: Any]])
        #expect(try json(inAttic.out)["floor"] as? String == floors.first { $0["number"] as? Int == 1 }?["id"] as? String)
    }

    /// init asks the server before it saves: a wrong token (7) or no server (1) saves nothing;
    /// the token can come from a file or standard input, and --offline saves without asking.
    @Test func initChecksTheServerAndTheTokenAndReadsItFromAFileOrStandardInput() throws {
        let server = try LiveServer()
        defer { server.stop() }
        let storage = work.appendingPathComponent("init-storage").path
        let tours = ToursdProcess.builtExecutable("tours").path
        let wrong = try self.tours("init", "--server", server.url.absoluteString, "--token", "not-the-token", "--storage", storage)
        #expect(wrong.status == 7 && wrong.err.contains("refused the token") && wrong.err.contains("nothing was saved"), "\(wrong.err)")
        #expect(!FileManager.default.fileExists(atPath: config))
        let down = try PortReservation()
        let unreachable = try self.tours("init", "--server", "http://127.0.0.1:\(down.port)", "--token", server.token, "--storage", storage)
        #expect(unreachable.status == 1 && unreachable.err.contains("--offline"), "\(unreachable.err)")
        #expect(!FileManager.default.fileExists(atPath: config))
        #expect(try self.tours("init", "--server", "http://127.0.0.1:\(down.port)", "--token", server.token, "--storage", storage, "--offline").status == 0)

        let piped = try runCommand(tours, ["--config", config, "init", "--server", server.url.absoluteString, "--token-file", "-", "--storage", storage],
                                   stdin: try input(server.token + "\n"))
        #expect(piped.status == 0 && piped.out.contains("which took the token"), "\(piped.err)")
        let saved = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: config))) as? [String: Any])
        #expect(saved["token"] as? String == server.token)
        let tokenFile = work.appendingPathComponent("token").path
        try (server.token + "\n").write(toFile: tokenFile, atomically: true, encoding: .utf8)
        #expect(try self.tours("init", "--server", server.url.absoluteString, "--token-file", tokenFile, "--storage", storage).status == 0)
        #expect(try self.tours("init", "--server", server.url.absoluteString, "--token-file", tokenFile, "--token", "x").status == 2)
        // Local storage is its owner's alone, as the configuration is.
        #expect((try FileManager.default.attributesOfItem(atPath: storage)[.posixPermissions] as? NSNumber)?.intValue == 0o700)
    }

    /// delete asks first: not at a terminal it needs --yes; at one, anything but y keeps it.
    @Test func propertyDeleteAsksFirst() throws {
        let server = try LiveServer()
        defer { server.stop() }
        try initialize(server.url, token: server.token)
        let property = try tours("property", "create", "Kept").out.trimmingCharacters(in: .whitespacesAndNewlines)
        let unasked = try tours("property", "delete", property)
        #expect(unasked.status == 2 && unasked.err.contains("--yes"))
        let command = [ToursdProcess.builtExecutable("tours").path, "--config", config, "property", "delete", property].joined(separator: " ")
        let declined = try runCommand("/usr/bin/script", ["-qec", command, "/dev/null"], stdin: try input("n\n"))
        #expect(declined.status == 0 && declined.out.contains("here, and on the server at the next sync? [y/N]") && declined.out.contains("kept \(property)"), "\(declined.out)")
        #expect(try tours("status", property).status == 0)
        let accepted = try runCommand("/usr/bin/script", ["-qec", command, "/dev/null"], stdin: try input("y\n"))
        #expect(accepted.status == 0 && accepted.out.contains("deleted \(property)"), "\(accepted.out)")
        #expect(try tours("status", property).status == 4)
    }

    /// An upload the server refuses for good (413 here, a token it refuses below) ends sync
    /// with 7 and what to do; queue list shows it, queue drop gives it up, and the rest syncs.
    @Test func refusedUploadsExitSevenAndCanBeDroppedFromTheQueue() throws {
        let server = try LiveServer(environment: ["TOURSD_maxPanoramaBytes": "100000"])
        defer { server.stop() }
        try initialize(server.url, token: server.token)
        let property = try tours("property", "create", "Refused").out.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try tours("panorama", "add", property, try file("small.jpg", bytes: 30_000), try file("huge.jpg", bytes: 300_000)).status == 0)
        let refused = try tours("sync")
        #expect(refused.status == 7 && refused.err.contains("1 upload refused by the server") && refused.err.contains("too large for the server"), "\(refused.err)")
        let uploads = try #require(try json(try tours("queue", "list", "--json").out)["uploads"] as? [[String: Any]])
        #expect(uploads.count == 1 && uploads[0]["state"] as? String == "failed" && uploads[0]["retryable"] as? Bool == false && uploads[0]["bytes"] as? Int == 300_000)
        let item = try #require(uploads[0]["item"] as? Int)
        #expect(try tours("queue", "list").out.contains("(retrying will not help)"))
        #expect(try tours("queue", "drop", "999999").status == 4)
        let dropped = try tours("queue", "drop", String(item))
        #expect(dropped.status == 0 && dropped.out.contains("gone from local storage"), "\(dropped.err)")
        #expect(try tours("queue", "list").out.contains("nothing queued"))
        #expect(try tours("sync").status == 0)
        let status = try json(try tours("status", property, "--json").out)
        #expect(status["isComplete"] as? Bool == true && status["panoramaCount"] as? Int == 1)

        // A token the server no longer takes: refused, and init is what fixes it.
        var saved = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: config))) as? [String: Any])
        saved["token"] = "revoked-token"
        try JSONSerialization.data(withJSONObject: saved).write(to: URL(fileURLWithPath: config))
        #expect(try tours("property", "create", "After").status == 0)
        let unauthorized = try tours("sync")
        #expect(unauthorized.status == 7 && unauthorized.err.contains("run tours init with a valid one"), "\(unauthorized.err)")
        let propertyItem = try #require((try json(try tours("queue", "list", "--json").out)["uploads"] as? [[String: Any]])?.first { $0["kind"] as? String == "property" }?["item"] as? Int)
        let kept = try tours("queue", "drop", String(propertyItem))
        #expect(kept.status == 5 && kept.err.contains("delete the property instead"), "\(kept.err)")
    }

    /// Uploaded panoramas' local copies go after the configured retention (0 days here); the
    /// counts stay.
    @Test func syncPrunesUploadedCopiesAfterTheRetentionAndTheCountsStay() throws {
        let server = try LiveServer()
        defer { server.stop() }
        try initialize(server.url, token: server.token)
        let property = try tours("property", "create", "Pruned").out.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try tours("panorama", "add", property, try file("p1.jpg", bytes: 40_000), try file("p2.jpg", bytes: 40_000)).status == 0)
        let stored = work.appendingPathComponent("storage/panoramas").path
        #expect(try FileManager.default.contentsOfDirectory(atPath: stored).count == 2)
        #expect(try tours("sync").status == 0) // the default keeps them a week
        #expect(try FileManager.default.contentsOfDirectory(atPath: stored).count == 2)
        let pruned = try json(try tours("prune", "--older-than", "0", "--json").out)
        #expect(pruned["files"] as? Int == 2 && pruned["bytes"] as? Int == 80_000)
        #expect(try FileManager.default.contentsOfDirectory(atPath: stored).isEmpty)
        let status = try json(try tours("status", property, "--json").out)
        #expect(status["panoramaCount"] as? Int == 2 && status["panoramasUploaded"] as? Int == 2 && status["isComplete"] as? Bool == true)

        var saved = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: config))) as? [String: Any])
        saved["pruneUploadedAfterDays"] = 0
        try JSONSerialization.data(withJSONObject: saved).write(to: URL(fileURLWithPath: config))
        #expect(try tours("panorama", "add", property, try file("p3.jpg", bytes: 40_000)).status == 0)
        #expect(try tours("sync").status == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: stored).isEmpty)

        // A negative retention keeps them: neither sync nor a bare prune removes one.
        saved["pruneUploadedAfterDays"] = -1
        try JSONSerialization.data(withJSONObject: saved).write(to: URL(fileURLWithPath: config))
        #expect(try tours("panorama", "add", property, try file("p4.jpg", bytes: 40_000)).status == 0)
        #expect(try tours("sync").status == 0)
        #expect(try tours("prune").out.contains("pruning is off"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: stored).count == 1)
    }
}
