#if canImport(Glibc)
import Glibc
#endif
import Foundation
import NTImagePreviews
import Testing
import TestSupport
import TestTraits

/// The second probe (issue "Hold at the new edges"): an anonymous share-link visitor, a
/// hostile tenant, untrusted images and geometry, an operator's mistake. One test per
/// finding, black box, against the release toursd.
@Suite(.serialized, .hangGuard, .testThreads) struct EdgeAttackTests {
    typealias Target = AttackTests.Target

    // 1. A self-crossing outline whose signed area is just above the drawing's cut-off put
    //    the label ~1e18 px away and the number formatting trapped: every view killed it.
    @Test func aSelfCrossingOutlineIsDrawnAndAnOutlandishOneRefused() throws {
        let target = try Target()
        let bowTie: [[Double]] = [[0, 0], [10_000, 10_000], [10_000, 1e-12], [0, 10_000]]
        #expect(try putPlan(target, rooms: [room(bowTie)]).status == 200)
        let link = try share(target)
        for _ in 0..<2 {
            let page = try target.send("GET", "\(link)/floors/\(target.floorId)")
            #expect(page.status == 200 && page.text.contains("<svg"))
        }
        #expect(target.daemon.process.isRunning)
        let far = try putPlan(target, rooms: [room([[0, 0], [1e300, 0], [0, 1]])])
        #expect(far.status == 400 && far.text.contains("farther than"))
    }

    // 2 and 3. A 1.7 MB progressive JPEG asked for 6.4 GB; 64 GETs of one uncached preview
    //    decoded it 64 times on the pool uploads share; another tenant's upload waited 53 s.
    @Test func imageBombsAndABurstOfPreviewsLeaveTheDaemonToEveryoneElse() async throws {
        let target = try Target()
        let other = try otherTenant(target)
        let madeBefore = try target.gauge("toursd_previews_made_total")
        // A JPEG of 150 scans, a 60,000 × 30,000 PNG of 60 bytes, a HEIC grid of 5,000 tiles.
        let bombs = [try putPanorama(target, JPEGBomb.make(width: 23_168, height: 11_584, acScans: 150)),
                     try putPanorama(target, PNGFixture.claiming(width: 60_000, height: 30_000), contentType: "image/png"),
                     try putPanorama(target, HEICFixture.claiming(items: 5_000), contentType: "image/heic")]
        #expect(bombs.allSatisfy { !$0.isEmpty })
        let ordinary = try putPanorama(target, try JPEGPreview.flat(width: 8192, height: 4096, quality: 95, grey: false))
        let link = try share(target)
        let answers = StatusTally()
        var burst: [Task<Void, Never>] = []
        for index in 0..<(64 + 3 * 4) {
            let id = index < 64 ? ordinary : bombs[index % 3]
            burst.append(Thread.detachedTask {
                let answer = try? target.client(timeoutSeconds: 120).request("GET", "\(link)/panoramas/\(id)/preview?width=1024")
                answers.add(answer?.status ?? -1)
            })
        }
        // While the burst is answered: another tenant's small upload, and the health check.
        var uploadSeconds: [Double] = [], healthSeconds: [Double] = []
        for round in 0..<5 {
            healthSeconds.append(try timed { () throws in #expect(try target.send("GET", "/healthz").status == 200) })
            if round % 2 == 0 {
                uploadSeconds.append(try timed { () throws in
                    let small = try JPEGPreview.flat(width: 400, height: 200, quality: 95, grey: false) + [UInt8](repeating: 0, count: 20_000)
                    #expect(try putPanorama(target, small, token: other.token, floorId: other.floorId).isEmpty == false)
                })
            }
        }
        for task in burst { await task.value }
        #expect(answers.statuses.allSatisfy { $0 == 200 }, "burst answers: \(answers.statuses.sorted())")
        #expect(target.daemon.process.isRunning)
        // One making per preview, whoever asked for it (the burst, or the processing each
        // panorama gets once stored): every width of each panorama once, a bomb's the placeholder.
        try await waitUntil("every panorama processed", seconds: 120) { try target.gauge("toursd_panoramas_processing") == 0 }
        let made = (1 + bombs.count + uploadSeconds.count) * 3
        #expect(try target.gauge("toursd_previews_made_total") - madeBefore == made)
        // A GET just after the burst is the cached file, not another making.
        #expect(try target.send("GET", "\(link)/panoramas/\(ordinary)/preview?width=1024").status == 200)
        #expect(try target.gauge("toursd_previews_made_total") - madeBefore == made)
        let peak = target.peakRSSKilobytes
        #expect(peak > 0 && peak < 512 * 1024, "peak RSS \(peak) KB")
        #expect(uploadSeconds.max() ?? 99 < 1, "another tenant's uploads took \(uploadSeconds) s")
        // Not a latency target (make bench has those): a /healthz queued behind the burst's
        // decodes (64 of about 0.13 s each, on one preview thread) would take seconds; one that
        // was not is answered within a few scheduling slices of a loaded machine (55 and 262 ms
        // seen in CI beside the other test processes, this test taking 65 s instead of 3).
        #expect(healthSeconds.max() ?? 99 < 0.5, "/healthz took \(healthSeconds) s")
    }

    // 4. A missing database deleted every panorama: a new database beside stored files made
    //    the start-up sweep remove them all as orphans. The restore drills.
    @Test func aDataDirectoryWithItsBlobsAndWithoutItsDatabaseIsRefusedAndKept() throws {
        let dataDir = testDirectory("restore").path
        defer { try? FileManager.default.removeItem(atPath: dataDir) }
        var daemon = try ToursdProcess(dataDir: dataDir, executable: ToursdProcess.releaseExecutable)
        try storePanoramas(daemon, count: 3)
        daemon.signal(SIGTERM)
        #expect(daemon.wait(seconds: 20)?.status == 0)
        let stored = storedFiles(dataDir)
        #expect(stored.count == 3)
        // The database moved aside (with its WAL, which may hold its last commits).
        let database = dataDir + "/toursd.sqlite", saved = dataDir + ".saved"
        let suffixes = ["", "-wal", "-shm"].filter { FileManager.default.fileExists(atPath: database + $0) }
        defer { for suffix in suffixes { try? FileManager.default.removeItem(atPath: saved + suffix) } }
        for suffix in suffixes { try FileManager.default.moveItem(atPath: database + suffix, toPath: saved + suffix) }
        let refused = startFailure(dataDir)
        #expect(refused.contains("the database that goes with them is missing") && refused.contains("Nothing was removed"), "\(refused)")
        #expect(storedFiles(dataDir) == stored)
        // The database restored, it starts and every file is still there.
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: database + suffix) }
        for suffix in suffixes { try FileManager.default.moveItem(atPath: saved + suffix, toPath: database + suffix) }
        daemon = try ToursdProcess(dataDir: dataDir, executable: ToursdProcess.releaseExecutable)
        #expect(storedFiles(dataDir) == stored)
        daemon.signal(SIGKILL)
        _ = daemon.wait(seconds: 10)
    }

    @Test func aDatabaseDeletedWhileServingIsNoticedAndNothingIsRemoved() async throws {
        let dataDir = testDirectory("restore").path
        defer { try? FileManager.default.removeItem(atPath: dataDir) }
        let daemon = try ToursdProcess(dataDir: dataDir, executable: ToursdProcess.releaseExecutable)
        let token = try storePanoramas(daemon, count: 2)
        let stored = storedFiles(dataDir)
        try FileManager.default.removeItem(atPath: dataDir + "/toursd.sqlite")
        let client = { try RawClient(port: daemon.port) }
        // Noticed by the timer (databaseFileCheckSeconds, 1), with no write to look.
        try await waitUntil("/healthz says the database file is gone") {
            let health = try client().request("GET", "/healthz").text
            return health.contains("degraded") && health.contains("deleted")
        }
        let write = try client().request("PUT", "/v1/properties/\(UUID().uuidString.lowercased())",
                                         headers: ["Authorization": "Bearer \(token)", "Content-Type": "application/json"],
                                         body: Array(#"{"name":"Lost","floorCount":1}"#.utf8))
        #expect(write.status == 503 && write.text.contains("deleted"), "\(write.status) \(write.text)")
        daemon.signal(SIGKILL)
        _ = daemon.wait(seconds: 10)
        let refused = startFailure(dataDir)
        #expect(refused.contains("is missing"), "\(refused)")
        #expect(storedFiles(dataDir) == stored)
    }

    // 5. The sign-in limit checked and recorded in two steps (200 wrong tokens at once all got
    //    401 against a limit of 5), and a success cleared the address's failures.
    @Test func signInsAreCountedInTheStepThatChecksThem() throws {
        let target = try Target(["signInFailuresAllowed": 5, "maxConnectionsPerAddress": 0])
        // 200 forms fetched first, then every POST written before any answer is read: they
        // arrive together, as the probe sent them.
        let posts = try (0..<200).map { _ in try signInRequest(target, token: "nt_wrong") }
        let clients = try posts.map { _ in try target.client(timeoutSeconds: 30) }
        for (client, post) in zip(clients, posts) { try client.send(post) }
        let statuses = clients.map { (try? $0.readResponse().status) ?? -1 }
        #expect(statuses.filter { $0 == 401 }.count <= 5, "\(statuses.sorted())")
        #expect(statuses.filter { $0 == 429 }.count >= 195)
    }

    @Test func aSuccessfulSignInBuysNoMoreGuesses() throws {
        let target = try Target(["signInFailuresAllowed": 3])
        #expect(try signIn(target, token: "nt_wrong").status == 401)
        #expect(try signIn(target, token: target.token).status == 303)
        #expect(try signIn(target, token: "nt_wrong").status == 401)
        #expect(try signIn(target, token: "nt_wrong").status == 401)
        #expect(try signIn(target, token: target.token).status == 429) // three failures in the window
    }

    // 6. Chunked framing took a bare LF after the size, after the data and in trailers, and
    //    text after the size: the desync shapes refused in the head.
    // Each body, framed leniently, is a valid property (201 where the framing is taken).
    @Test(arguments: [
        "1b junk\r\n{\"name\":\"A\",\"floorCount\":1}\r\n0\r\n\r\n",
        "1b\n{\"name\":\"A\",\"floorCount\":1}\r\n0\r\n\r\n",
        "1b\r\n{\"name\":\"A\",\"floorCount\":1}\n0\r\n\r\n",
        "1b\r\n{\"name\":\"A\",\"floorCount\":1}\r\n0\r\nX-Trailer: 1\n\r\n",
    ])
    func chunkedFramingIsStrict(_ body: String) throws {
        let target = try Target()
        #expect(try target.status(ofRaw: "PUT /v1/properties/\(UUID().uuidString.lowercased()) HTTP/1.1\r\nHost: t\r\n"
                                  + "Authorization: Bearer \(target.token)\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
                                  + body) == 400)
    }

    // 7. If-Range was ignored: a resumed download after the world map changed got half of one
    //    and half of the other.
    @Test func aRangeUnderAnOldValidatorGetsAllOfTheNewBytes() throws {
        let target = try Target()
        let path = "/v1/floors/\(target.floorId)/worldmap"
        let octets = target.auth.merging(["Content-Type": "application/octet-stream"]) { $1 }
        #expect([200, 201].contains(try target.send("PUT", path, headers: octets, body: [UInt8](repeating: 0x61, count: 1_000)).status))
        let first = try target.send("GET", path, headers: target.auth.merging(["Range": "bytes=0-499"]) { $1 })
        let oldTag = try #require(first.header("ETag"))
        #expect(first.status == 206)
        #expect(try target.send("PUT", path, headers: octets, body: [UInt8](repeating: 0x62, count: 1_000)).status == 200)
        let resumed = try target.send("GET", path, headers: target.auth.merging(["Range": "bytes=500-", "If-Range": oldTag]) { $1 })
        #expect(resumed.status == 200 && resumed.body == [UInt8](repeating: 0x62, count: 1_000))
        let newTag = try #require(resumed.header("ETag"))
        let current = try target.send("GET", path, headers: target.auth.merging(["Range": "bytes=500-", "If-Range": newTag]) { $1 })
        #expect(current.status == 206 && current.body.count == 500)
        let dated = try target.send("GET", path, headers: target.auth.merging(["Range": "bytes=500-", "If-Range": "Tue, 01 Dec 2026 00:00:00 GMT"]) { $1 })
        #expect(dated.status == 200 && dated.body.count == 1_000)
    }

    // 8. A panorama deleted while its preview was being made left the preview on disk.
    @Test func aPanoramaDeletedWhileItsPreviewIsMadeTakesThePreviewAlong() async throws {
        let target = try Target()
        let id = try putPanorama(target, try JPEGPreview.flat(width: 8192, height: 4096, quality: 95, grey: false))
        let making = Thread.detachedTask { _ = try? target.client(timeoutSeconds: 60).request("GET", "/v1/panoramas/\(id)/preview?width=4096", headers: target.auth) }
        // Bounded: 2,000 looks at the gauge, a millisecond apart.
        var seen = false
        for _ in 0..<2_000 where !seen {
            seen = try target.gauge("toursd_previews_waiting") >= 1
            if !seen { usleep(1_000) }
        }
        #expect(seen, "the preview was never seen being made")
        #expect(try target.send("DELETE", "/v1/panoramas/\(id)", headers: target.auth).status == 204)
        await making.value
        // The making ends once its file is cached and checked against the deletion; so does
        // the cutting of its tiles (8192 wide: it is tiled too).
        try await waitUntil("the making has ended", seconds: 60) {
            try target.gauge("toursd_previews_waiting") == 0 && target.gauge("toursd_tiles_waiting") == 0
                && target.gauge("toursd_panoramas_processing") == 0
        }
        let left = filesUnder(target.dataDir + "/previews").filter { $0.contains(id) }
        #expect(left.isEmpty, "\(left)")
    }

    // 9. Opaque capture and structure JSON came back through a Double.
    @Test func opaqueNumbersAreKeptAsSent() throws {
        let target = try Target()
        let numbers = #"{"big":18446744073709551615,"negativeZero":-0.0,"precise":0.1000000000000000055511151231257827,"huge":1e400}"#
        let plan = #"{"planId":"\#(UUID().uuidString.lowercased())","mode":"newScan","structure":\#(numbers),"rooms":[{"id":"\#(UUID().uuidString.lowercased())","outline":[[0,0],[4,0],[4,3]],"capture":\#(numbers)}]}"#
        #expect(try target.send("PUT", "/v1/floors/\(target.floorId)/plan", headers: target.auth + target.json, body: Array(plan.utf8)).status == 200)
        let tourId = try #require(try target.send("GET", "/v1/properties/\(target.propertyId)", headers: target.auth).json?["tourId"] as? String)
        let tour = try target.send("GET", "/v1/tours/\(tourId)", headers: target.auth).text
        // Each literal twice: the floor's structure and the room's capture.
        for literal in ["18446744073709551615", "-0.0", "0.1000000000000000055511151231257827", "1e400"] {
            #expect(tour.components(separatedBy: literal).count == 3, "\(literal) in \(tour.prefix(2000))")
        }
    }

    // 10. check-config said ok for what serve could not serve; a toursd on a busy port made
    //     its data directory, tenant and token first.
    @Test func checkConfigTriesWhatServeWillDo() throws {
        let target = try Target()
        let binary = ToursdProcess.releaseExecutable.path
        let fresh = testDirectory("check").path
        defer { try? FileManager.default.removeItem(atPath: fresh) }
        let host = try runCommand(binary, ["check-config", "--host", "not-an-address", "--data-dir", fresh], timeoutSeconds: 30)
        #expect(host.status == 2 && host.err.contains("host"))
        let folder = try runCommand(binary, ["check-config", "--data-dir", "/proc/self/nope/data"], timeoutSeconds: 30)
        #expect(folder.status == 1 && folder.err.contains("dataDir"), "\(folder.err)")
        let busy = try runCommand(binary, ["check-config", "--port", String(target.daemon.port), "--data-dir", fresh], timeoutSeconds: 30)
        #expect(busy.status == 1 && busy.err.contains("cannot listen"), "\(busy.err)")
        try? FileManager.default.removeItem(atPath: fresh)
        let second = try runCommand(binary, ["serve", "--port", String(target.daemon.port), "--data-dir", fresh], timeoutSeconds: 30)
        #expect(second.status == 1 && second.err.contains("cannot listen"))
        #expect(!FileManager.default.fileExists(atPath: fresh), "a toursd that could not listen made its data directory")
    }

    // 11. Share links per tour were unbounded (3,000 in 0.8 s; a 965 KB property page).
    @Test func shareLinksPerTourAreCappedAndListedInPages() throws {
        let target = try Target(["maxSharesPerTour": 3])
        let tourId = try #require(try target.send("GET", "/v1/properties/\(target.propertyId)", headers: target.auth).json?["tourId"] as? String)
        for _ in 0..<3 { _ = try share(target) }
        let refused = try target.send("POST", "/v1/tours/\(tourId)/shares", headers: target.auth + target.json, body: Array(#"{"expiresInSeconds":3600}"#.utf8))
        #expect(refused.status == 409 && refused.text.contains("maxSharesPerTour"))
        let first = try #require(try target.send("GET", "/v1/tours/\(tourId)/shares?limit=2", headers: target.auth).json)
        let next = try #require(first["next"] as? String)
        #expect((first["items"] as? [Any])?.count == 2)
        let second = try #require(try target.send("GET", "/v1/tours/\(tourId)/shares?limit=2&after=\(next)", headers: target.auth).json)
        #expect((second["items"] as? [Any])?.count == 1 && second["next"] is NSNull)
    }

    // 12. A revoked link's previews stayed in browsers for a day; a SIGHUP whose logFile could
    //     not be opened said it had reopened that path.
    @Test func aShareLinksPreviewsAreRevalidated() throws {
        let target = try Target()
        let id = try putPanorama(target, try JPEGPreview.flat(width: 1024, height: 512, quality: 90, grey: false))
        let preview = try target.send("GET", "\(try share(target))/panoramas/\(id)/preview")
        #expect(preview.status == 200 && preview.header("Cache-Control") == "private, no-cache")
    }

    @Test func aLogFileThatCannotBeReopenedIsNotSaidToBe() async throws {
        let log = testDirectory("log").path + ".log"
        defer { try? FileManager.default.removeItem(atPath: log) }
        let target = try Target(["logFile": log])
        try JSONSerialization.data(withJSONObject: ["logFile": "/proc/self/nope/toursd.log"]).write(to: URL(fileURLWithPath: target.dataDir + ".json"))
        target.daemon.signal(SIGHUP)
        let text = { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }
        try await waitUntil("the reload is logged") { text().contains("reloaded") }
        #expect(text().contains("logReopened=failed") && !text().contains("logReopened=/proc"), "\(text())")
    }

    // MARK: Helpers

    private func room(_ outline: [[Double]]) -> [String: Any] {
        ["id": UUID().uuidString.lowercased(), "name": "Room", "outline": outline]
    }

    private func putPlan(_ target: Target, rooms: [[String: Any]]) throws -> RawClient.Response {
        let plan = try JSONSerialization.data(withJSONObject: ["planId": UUID().uuidString.lowercased(), "mode": "newScan", "rooms": rooms])
        return try target.send("PUT", "/v1/floors/\(target.floorId)/plan", headers: target.auth + target.json, body: Array(plan))
    }

    /// A new share link of the target's tour: its path, /t/….
    private func share(_ target: Target) throws -> String {
        let property = try target.send("GET", "/v1/properties/\(target.propertyId)", headers: target.auth).json
        let tourId = try #require(property?["tourId"] as? String)
        let made = try target.send("POST", "/v1/tours/\(tourId)/shares", headers: target.auth + target.json, body: Array(#"{"expiresInSeconds":3600}"#.utf8))
        return try #require(made.json?["url"] as? String)
    }

    /// Stores a panorama one-shot; returns its id ("" when refused).
    @discardableResult
    private func putPanorama(_ target: Target, _ bytes: [UInt8], token: String? = nil, floorId: String? = nil, contentType: String = "image/jpeg") throws -> String {
        let id = UUID().uuidString.lowercased()
        let answer = try target.client(timeoutSeconds: 30).request("PUT", "/v1/panoramas/\(id)?floorId=\(floorId ?? target.floorId)",
                                                                   headers: ["Authorization": "Bearer \(token ?? target.token)", "Content-Type": contentType], body: bytes)
        return answer.status == 201 ? id : ""
    }

    /// A second tenant of the target's daemon, with a floor of its own.
    private func otherTenant(_ target: Target) throws -> (token: String, floorId: String) {
        let made = try runCommand(ToursdProcess.releaseExecutable.path, ["tokens", "create", "--tenant", "other", "--data-dir", target.dataDir], timeoutSeconds: 30)
        let token = try #require(made.out.split(separator: "\n").last.map(String.init))
        let headers = ["Authorization": "Bearer \(token)", "Content-Type": "application/json"]
        let property = UUID().uuidString.lowercased(), floor = UUID().uuidString.lowercased()
        #expect(try target.send("PUT", "/v1/properties/\(property)", headers: headers, body: Array(#"{"name":"Other","floorCount":1}"#.utf8)).status == 201)
        #expect(try target.send("PUT", "/v1/properties/\(property)/floors/\(floor)", headers: headers, body: Array(#"{"number":0}"#.utf8)).status == 201)
        return (token, floor)
    }

    /// Stores `count` panoramas on a fresh daemon's first tenant; returns its token.
    @discardableResult
    private func storePanoramas(_ daemon: ToursdProcess, count: Int) throws -> String {
        let token = try daemon.adminToken
        let headers = ["Authorization": "Bearer \(token)", "Content-Type": "application/json"]
        let property = UUID().uuidString.lowercased(), floor = UUID().uuidString.lowercased()
        #expect(try RawClient(port: daemon.port).request("PUT", "/v1/properties/\(property)", headers: headers, body: Array(#"{"name":"Kept","floorCount":1}"#.utf8)).status == 201)
        #expect(try RawClient(port: daemon.port).request("PUT", "/v1/properties/\(property)/floors/\(floor)", headers: headers, body: Array(#"{"number":0}"#.utf8)).status == 201)
        let jpeg = try JPEGPreview.flat(width: 256, height: 128, quality: 90, grey: false)
        for _ in 0..<count {
            let answer = try RawClient(port: daemon.port).request("PUT", "/v1/panoramas/\(UUID().uuidString.lowercased())?floorId=\(floor)",
                                                                  headers: ["Authorization": "Bearer \(token)", "Content-Type": "image/jpeg"], body: jpeg)
            #expect(answer.status == 201)
        }
        return token
    }

    /// The stored files under a data directory's blob folder.
    private func storedFiles(_ dataDir: String) -> Set<String> {
        Set(filesUnder(dataDir + "/blobs").filter { $0.split(separator: "/").count == 3 })
    }

    /// What toursd said when it would not start on `dataDir` ("" when it started).
    private func startFailure(_ dataDir: String) -> String {
        do {
            let started = try ToursdProcess(dataDir: dataDir, executable: ToursdProcess.releaseExecutable)
            started.signal(SIGKILL)
            _ = started.wait(seconds: 10)
            return ""
        } catch {
            return "\(error)"
        }
    }

    /// Signs in through the viewer's form, as a browser would: the form's cookie and csrf value,
    /// then the token.
    private func signIn(_ target: Target, token: String) throws -> RawClient.Response {
        let client = try target.client()
        try client.send(try signInRequest(target, token: token))
        return try client.readResponse()
    }

    /// The sign-in POST a browser sends after fetching the form (its cookie and csrf value).
    private func signInRequest(_ target: Target, token: String) throws -> String {
        let form = try target.send("GET", "/app/login")
        let cookies = form.headers.filter { $0.name.lowercased() == "set-cookie" }.map { String($0.value.split(separator: ";")[0]) }
        let page = form.text
        let csrf = page.range(of: "name=\"csrf\" value=\"").map { String(page[$0.upperBound...].prefix { $0 != "\"" }) } ?? ""
        let body = "csrf=\(csrf)&token=\(token.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? token)"
        return "POST /app/login HTTP/1.1\r\nHost: t\r\nCookie: \(cookies.joined(separator: "; "))\r\n"
            + "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body
    }

    private func timed(_ body: () throws -> Void) throws -> Double {
        let start = Date()
        try body()
        return Date().timeIntervalSince(start)
    }
}


extension AttackTests.Target {
    /// The most memory the daemon has held at once (VmHWM).
    var peakRSSKilobytes: Int {
        let status = (try? String(contentsOfFile: "/proc/\(daemon.process.pid)/status", encoding: .utf8)) ?? ""
        return status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") }.flatMap { Int($0.split(separator: " ", omittingEmptySubsequences: true)[1]) } ?? -1
    }
}

/// The third probe (issue "Hold at the third edge"): the bucket, the webhooks and the tiles.
extension EdgeAttackTests {
    // 1 and 7. A 17 KB 65500 × 16 JPEG was tiled into 20480-px faces (788 MB, 114 CPU-s), and
    //    previews decoded while a tiling held its planes added their budgets up (500 MB): one
    //    image memory for all, and only a panorama's shape tiled, its faces capped.
    @Test func imageWorkHoldsOneBudgetAndAStripIsNotTiled() async throws {
        let target = try Target() // imageMemoryBytes: 512 MiB by default
        let other = try otherTenant(target)
        let strip = try JPEGPreview.flat(width: 65_500, height: 16, quality: 90, grey: false)
        let strips = try (0..<3).map { _ in try putPanorama(target, strip) }
        #expect(strips.allSatisfy { !$0.isEmpty })
        let progressive = try (0..<2).map { _ in try putPanorama(target, JPEGBomb.make(width: 8192, height: 4096, acScans: 40)) }
        let large = try putPanorama(target, try JPEGPreview.flat(width: 16_384, height: 8192, quality: 80, grey: false))
        #expect(!large.isEmpty)
        let link = try share(target)
        let answers = StatusTally()
        var burst: [Task<Void, Never>] = []
        for id in progressive + strips {
            burst.append(Thread.detachedTask {
                answers.add((try? target.client(timeoutSeconds: 120).request("GET", "\(link)/panoramas/\(id)/preview?width=1024"))?.status ?? -1)
            })
        }
        // Meanwhile another tenant: a small upload, then its preview, not yet made.
        let small = try JPEGPreview.flat(width: 2048, height: 1024, quality: 90, grey: false)
        var mine = ""
        let uploadSeconds = try timed { () throws in mine = try putPanorama(target, small, token: other.token, floorId: other.floorId) }
        #expect(!mine.isEmpty)
        let previewSeconds = try timed { () throws in
            let preview = try target.client(timeoutSeconds: 30).request("GET", "/v1/panoramas/\(mine)/preview?width=1024", headers: ["Authorization": "Bearer \(other.token)"])
            #expect(preview.status == 200)
        }
        for task in burst { await task.value }
        #expect(answers.statuses == [200, 200, 200, 200, 200], "\(answers.statuses)")
        try await waitUntil("the panoramas' tiles", seconds: 300) {
            try target.gauge("toursd_tile_sets_made_total") == 3 && target.gauge("toursd_tiles_waiting") == 0
        }
        // The three panoramas were tiled (the 16384-wide one's faces 5120 px); the strips never.
        #expect(try target.gauge("toursd_tile_sets_made_total") == 3)
        #expect(try target.gauge("toursd_image_memory_peak_bytes") <= 512 << 20)
        let peak = target.peakRSSKilobytes
        #expect(peak > 0 && peak < 600 * 1024, "peak RSS \(peak) KB")
        #expect(uploadSeconds < 1, "another tenant's upload took \(uploadSeconds) s")
        #expect(previewSeconds < 5, "another tenant's preview took \(previewSeconds) s")
    }

    // 10. check-config said ok for what serve refuses: it now makes serve's own checks.
    @Test func checkConfigRefusesWhatServeRefuses() throws {
        let dataDir = testDirectory("check-config").path
        defer { try? FileManager.default.removeItem(atPath: dataDir) }
        try FileManager.default.createDirectory(atPath: dataDir, withIntermediateDirectories: true)
        let shortKey = dataDir + "/short.key"
        try Data([1, 2, 3, 4, 5]).write(to: URL(fileURLWithPath: shortKey))
        for (config, words) in [(["blobStore": "s3://"], "bucket"), (["blobStore": "s3://tours/dep"], "AWS_ACCESS_KEY_ID"),
                                (["webhookKeyFile": shortKey], "32 bytes")] {
            let file = dataDir + "/config.json"
            try JSONSerialization.data(withJSONObject: config).write(to: URL(fileURLWithPath: file))
            let base = ["-u", "AWS_ACCESS_KEY_ID", "-u", "AWS_SECRET_ACCESS_KEY", ToursdProcess.releaseExecutable.path]
            for command in ["check-config", "serve"] {
                let run = try runCommand("/usr/bin/env", base + [command, "--config", file, "--data-dir", dataDir + "/data", "--port", "0"], timeoutSeconds: 30)
                #expect(run.status != 0 && run.err.contains(words), "\(command) with \(config): \(run.status) \(run.err)")
            }
        }
    }

    // 2. A new database beside a bucket deleted what was in it: a second daemon with a fresh
    //    data directory and the same blobStore swept all of another deployment's panoramas.
    @Test func aNewDatabaseBesideADeploymentsBucketRemovesNothing() throws {
        let server = try S3Server(.rclone)
        defer { server.stop() }
        try FileManager.default.createDirectory(atPath: server.directory + "/tours", withIntermediateDirectories: true)
        let config: [String: Any] = ["blobStore": "s3://tours/dep", "bucketSweepSeconds": 1, "orphanGraceSeconds": 0]
        let first = try Target(config, environment: server.environment)
        for _ in 0..<3 { #expect(!(try putPanorama(first, try JPEGPreview.flat(width: 256, height: 128, quality: 90, grey: false))).isEmpty) }
        let objects = { Set(filesUnder(server.directory + "/tours/dep").filter { $0.contains("panoramas/") }) }
        let before = objects()
        #expect(before.count == 3)
        var refusal = ""
        do {
            _ = try Target(config, environment: server.environment)
        } catch {
            refusal = "\(error)"
        }
        #expect(refusal.contains("belongs to deployment") && refusal.contains("Nothing was removed"), "\(refusal)")
        #expect(objects() == before)
        #expect(try first.send("GET", "/v1/panoramas", headers: first.auth).status < 500)
    }

    // 3. A redelivery during a delivery was silently undone: the running delivery's record
    //    overwrote the cursor the redelivery had set.
    @Test func aRedeliveryDuringADeliveryIsKept() async throws {
        let receiver = try HookReceiver(delaySeconds: 0.5)
        defer { receiver.stop() }
        let target = try Target(["webhookAllowPrivateTargets": true, "webhookPollMs": 50, "tourChangedQuietSeconds": 3600])
        let made = try target.send("POST", "/v1/webhooks", headers: target.auth + target.json,
                                   body: Array(#"{"url":"\#(receiver.url())","events":["property.created"]}"#.utf8))
        let id = try #require(made.json?["id"] as? String, "\(made.text)")
        for _ in 0..<6 { #expect(try makeProperty(target, token: target.token) == 201) }
        let events = try feed(target).filter { $0.type == "property.created" }.map(\.id)
        #expect(events.count == 7) // the target's own property, then these six
        try await waitUntil("three delivered", seconds: 30) { receiver.received.count >= 3 }
        let before = receiver.received.count
        #expect(try target.send("POST", "/v1/webhooks/\(id)/redeliver", headers: target.auth + target.json, body: Array(#"{"after":"0"}"#.utf8)).status == 200)
        try await waitUntil("all six again after the redelivery", seconds: 60) {
            Set(receiver.received.dropFirst(before).map(\.eventId)).isSuperset(of: events)
        }
    }

    // 4. One tenant's webhooks starved everyone else's: ten endpoints always due took every
    //    slot, in the order of their rows.
    @Test func oneTenantsWebhooksLeaveOthersTheirTurn() async throws {
        let receiver = try HookReceiver()
        defer { receiver.stop() }
        // Turns are taken every webhookPollMs (1 s, the default): four slots a round for ten
        // endpoints that each have something due every round.
        let target = try Target(["webhookAllowPrivateTargets": true, "tourChangedQuietSeconds": 3600])
        for index in 0..<10 {
            let url = receiver.url("a\(index)")
            #expect(try target.send("POST", "/v1/webhooks", headers: target.auth + target.json,
                                    body: Array(#"{"url":"\#(url)"}"#.utf8)).status == 201)
        }
        // Tenant A changes something every 100 ms while B's endpoint waits for its turn.
        let busy = Thread.detachedTask {
            for _ in 0..<150 {
                _ = try? makeProperty(target, token: target.token)
                usleep(100_000)
            }
        }
        try await waitUntil("tenant A's endpoints busy", seconds: 30) { Set(receiver.received.map(\.path)).count >= 4 }
        let other = try otherTenant(target)
        #expect(try target.send("POST", "/v1/webhooks", headers: ["Authorization": "Bearer \(other.token)"] + target.json,
                                body: Array(#"{"url":"\#(receiver.url("b"))"}"#.utf8)).status == 201)
        let start = Date()
        #expect(try makeProperty(target, token: other.token) == 201)
        try await waitUntil("tenant B's endpoint served", seconds: 10) { receiver.received.contains { $0.path.hasSuffix("/b") } }
        #expect(Date().timeIntervalSince(start) < 5)
        await busy.value
    }

    // 5. A revoked share link's original stayed downloadable: a 302 to a presigned URL good
    //    for s3PresignedSeconds. Under a link the full-size image now comes through toursd
    //    (and is made again from the pixels, never the original: docs/security.md).
    @Test func aRevokedLinksOriginalIsGoneAtOnce() throws {
        let server = try S3Server(.rclone)
        defer { server.stop() }
        try FileManager.default.createDirectory(atPath: server.directory + "/tours", withIntermediateDirectories: true)
        let target = try Target(["blobStore": "s3://tours/p", "s3PresignedReads": true, "s3PresignedSeconds": 3600], environment: server.environment)
        let image = try JPEGPreview.flat(width: 256, height: 128, quality: 90, grey: false)
        let id = try putPanorama(target, image)
        let property = try target.send("GET", "/v1/properties/\(target.propertyId)", headers: target.auth).json
        let tourId = try #require(property?["tourId"] as? String)
        let made = try target.send("POST", "/v1/tours/\(tourId)/shares", headers: target.auth + target.json, body: Array(#"{"expiresInSeconds":3600,"offersOriginals":true}"#.utf8))
        let (link, share) = (try #require(made.json?["url"] as? String), try #require(made.json?["id"] as? String))
        let original = try target.send("GET", "\(link)/panoramas/\(id)/image")
        #expect(original.status == 200 && original.header("Content-Type") == "image/jpeg" && original.header("Location") == nil
                && JPEGPreview.dimensions(of: original.body)?.width == 256, "\(original.status)")
        #expect(try target.send("DELETE", "/v1/shares/\(share)", headers: target.auth).status == 204)
        #expect(try target.send("GET", "\(link)/panoramas/\(id)/image").status == 404)
    }

    // 6. Credentials the bucket refuses: toursd started, /healthz said ok, uploads were 500s.
    @Test func credentialsTheBucketRefusesAreARefusalThenA503() async throws {
        let server = try S3Server(.rclone)
        defer { server.stop() }
        try FileManager.default.createDirectory(atPath: server.directory + "/tours", withIntermediateDirectories: true)
        let config: [String: Any] = ["blobStore": "s3://tours/c", "retryAfterSeconds": 1]
        var refusal = ""
        do {
            _ = try Target(config, environment: server.environment.merging(["AWS_SECRET_ACCESS_KEY": "not-the-secret"]) { $1 })
        } catch {
            refusal = "\(error)"
        }
        #expect(refusal.contains("refuses toursd's credentials"), "\(refusal)")
        let target = try Target(config, environment: server.environment)
        server.stop()
        try server.start(secretKey: "rotated-away")
        let id = UUID().uuidString.lowercased()
        let upload = try target.client(timeoutSeconds: 30).request("PUT", "/v1/panoramas/\(id)?floorId=\(target.floorId)",
                                                                  headers: target.auth + ["Content-Type": "image/jpeg"],
                                                                  body: try JPEGPreview.flat(width: 256, height: 128, quality: 90, grey: false))
        #expect(upload.status == 503 && upload.header("Retry-After") != nil && upload.text.contains("credentials"), "\(upload.status) \(upload.text)")
        #expect(try target.send("GET", "/healthz").text.contains("degraded"))
    }

    // 8. Every 8K panorama's thumbnail was a grey box: the 320-px preview was refused.
    @Test func an8KPanoramasThumbnailIsMade() throws {
        let target = try Target()
        let source = JPEGBomb.make(width: 8192, height: 4096, acScans: 1)
        let id = try putPanorama(target, source)
        let thumbnail = try target.send("GET", "/v1/panoramas/\(id)/preview?width=320", headers: target.auth)
        #expect(thumbnail.status == 200 && JPEGPreview.dimensions(of: thumbnail.body)?.width == 320)
        #expect(thumbnail.body != (try JPEGPreview.placeholder(width: 320, height: 160, quality: 82)), "the thumbnail is the placeholder")
    }

    // 9. The IETF draft: a 104 went to an HTTP/1.0 request; a completing append that failed
    //    its Repr-Digest said Upload-Complete: ?0.
    @Test func theDraftSendsNo104ToHTTP10AndSaysCompleteOnACompletingRefusal() throws {
        let target = try Target()
        let image = try JPEGPreview.flat(width: 256, height: 128, quality: 90, grey: false)
        let client = try target.client()
        try client.send("PUT /v1/panoramas/\(UUID().uuidString.lowercased())?floorId=\(target.floorId) HTTP/1.0\r\nHost: t\r\n"
                        + "Authorization: Bearer \(target.token)\r\nUpload-Draft-Interop-Version: 8\r\nUpload-Complete: ?1\r\n"
                        + "Content-Type: image/jpeg\r\nContent-Length: \(image.count)\r\n\r\n")
        try client.send(image)
        #expect(try client.readResponse().status == 201)
        let wrong = "sha-256=:" + Data(repeating: 7, count: 32).base64EncodedString() + ":"
        let created = try target.send("POST", "/v1/uploads?panoramaId=\(UUID().uuidString.lowercased())&floorId=\(target.floorId)",
                                      headers: target.auth + ["Upload-Draft-Interop-Version": "8", "Upload-Complete": "?0", "Content-Type": "image/jpeg",
                                                              "Repr-Digest": wrong], body: Array(image.prefix(1000)))
        let location = try #require(created.header("Location"), "\(created.status) \(created.text)")
        let completing = try target.send("PATCH", location, headers: target.auth + ["Upload-Draft-Interop-Version": "8", "Upload-Complete": "?1",
                                                                                     "Upload-Offset": "1000", "Content-Type": "application/partial-upload"],
                                          body: Array(image.dropFirst(1000)))
        #expect(completing.status == 400 && completing.header("Upload-Complete") == "?1", "\(completing.status) \(completing.headers)")
    }

    // 10. Webhook URLs whose host is loopback or link-local in another spelling were accepted
    //     when made (their deliveries were refused).
    @Test func webhookHostsInOtherSpellingsAreRefusedWhenMade() throws {
        let target = try Target()
        for url in ["http://2130706433/", "http://0x7f000001/", "http://0177.0.0.1/", "http://127.1/", "http://0/", "http://[fe80::1%25lo]/"] {
            let made = try target.send("POST", "/v1/webhooks", headers: target.auth + target.json, body: Array(#"{"url":"\#(url)"}"#.utf8))
            #expect(made.status == 400, "\(url): \(made.status) \(made.text)")
        }
    }

    // 11. Every commit woke every waiting long-poll of every tenant: 60 waiting polls made
    //     another tenant's writes cost 4.7 times the CPU. Now a commit wakes its tenant's alone.
    @Test func anotherTenantsWritesWakeNoWaitingFeed() async throws {
        let target = try Target(["maxEventWaitSeconds": 30, "eventPollMs": 60_000])
        let other = try otherTenant(target)
        let last = try feed(target).last?.id ?? "0"
        let polls = (0..<60).map { _ in
            Thread.detachedTask { _ = try? target.client(timeoutSeconds: 60).request("GET", "/v1/events?after=\(last)&wait=20", headers: target.auth) }
        }
        try await waitUntil("sixty feed requests in", seconds: 30) { try target.gauge("http_active_connections") > 60 }
        for _ in 0..<20 { #expect(try makeProperty(target, token: other.token) == 201) }
        #expect(try target.gauge("toursd_event_waits_woken_total") == 0)
        // The waiting tenant's own change wakes its polls (those waiting by then), and they answer.
        #expect(try makeProperty(target, token: target.token) == 201)
        for poll in polls { await poll.value }
        #expect((1...60).contains(try target.gauge("toursd_event_waits_woken_total")))
    }

    // 11. With PostgreSQL stopped under load, a GET got no answer within 12 s: on one token,
    //     a token check joined an identical one its failed connection had already answered,
    //     and waited for ever. Eight clients, 200 GETs during the outage: every one a 503.
    @Test func everyRequestDuringADatabaseOutageIsAnswered() async throws {
        let cluster = try PostgresCluster()
        defer { cluster.stop() }
        let target = try Target(["databaseUrl": try cluster.database("outage"), "databasePoolSize": 4, "retryAfterSeconds": 2])
        try cluster.down()
        let answers = StatusTally()
        let clients = (0..<8).map { _ in
            Thread.detachedTask {
                for _ in 0..<25 {
                    let start = ContinuousClock.now
                    let status = (try? target.client(timeoutSeconds: 20).request("GET", "/v1/properties", headers: target.auth).status) ?? -1
                    answers.add(status, took: ContinuousClock.now - start)
                }
            }
        }
        for client in clients { await client.value }
        #expect(answers.statuses.count == 200 && answers.statuses.allSatisfy { $0 == 503 }, "\(answers.statuses)")
        #expect(answers.slowest < .seconds(5), "the slowest answer took \(answers.slowest) (libpq's connect_timeout is 5 s)")
        try cluster.up()
    }

    /// A new property of the tenant; its status.
    private func makeProperty(_ target: Target, token: String) throws -> Int {
        try target.send("PUT", "/v1/properties/\(UUID().uuidString.lowercased())", headers: ["Authorization": "Bearer \(token)"] + target.json,
                        body: Array(#"{"name":"P","floorCount":1}"#.utf8)).status
    }

    /// The target's first tenant's feed.
    private func feed(_ target: Target) throws -> [(id: String, type: String)] {
        let page = try target.send("GET", "/v1/events?limit=200", headers: target.auth).json
        return ((page?["items"] as? [[String: Any]]) ?? []).map { ($0["id"] as? String ?? "", $0["type"] as? String ?? "") }
    }
}
