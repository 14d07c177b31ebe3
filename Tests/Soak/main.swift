#if canImport(Glibc)
import Glibc
#endif
import Foundation
import NTHashing
import NTSQLiteDB
import TestSupport

// make soak: several client processes (SyncWorker soak) capture and upload through a proxy
// that resets, stalls and truncates connections at random, while toursd is killed with
// SIGKILL and restarted at random moments. Each worker keeps its own fsynced ledger of what
// the library told it was stored. Then: ledger = client database = server, for every kind
// (properties, floors, plans as planRevision and rooms, world maps, panoramas with their
// digests); no orphan file, no row without its file, no item failed that had attempts left.
// --tamper deletes one acknowledged panorama from the server before the comparison: the
// soak must then fail (a test of the test).
// usage: Soak [--seconds N] [--clients N] [--tamper]

func option(_ name: String, _ fallback: Int) -> Int {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count, let value = Int(arguments[index + 1]), value > 0 else { return fallback }
    return value
}

func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

let seconds = option("--seconds", 180)
let clients = option("--clients", 3)
let work = FileManager.default.temporaryDirectory.appendingPathComponent("soak-\(UUID().uuidString)")
let dataDir = work.appendingPathComponent("toursd").path
try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)

var toursd = try ToursdProcess(dataDir: dataDir)
let port = toursd.port
let token = try toursd.adminToken
let proxy = try FaultProxy(upstreamPort: port, chaos: Chaos())
say("soak: \(clients) clients for \(seconds) s through a chaos proxy; toursd on \(port), killed at random")

// The clients, each with its own storage directory.
let storages = (0..<clients).map { work.appendingPathComponent("client-\($0)") }
var workers: [ChildProcess] = []
for storage in storages {
    workers.append(try ChildProcess(ToursdProcess.builtExecutable("SyncWorker").path,
                                    ["soak", "http://127.0.0.1:\(proxy.port)", token, storage.path, String(seconds), storage.path + ".ledger"],
                                    standardOutput: .pipe, standardError: .inherit))
}

// The killer: SIGKILL at random moments during the capture phase, restarted on the same port.
var restarts = 0
let deadline = Date().addingTimeInterval(Double(seconds))
while Date().addingTimeInterval(3) < deadline {
    Thread.sleep(forTimeInterval: Double.random(in: 1.5...5))
    toursd.signal(SIGKILL)
    _ = toursd.wait()
    Thread.sleep(forTimeInterval: Double.random(in: 0...0.5))
    toursd = try ToursdProcess(dataDir: dataDir, port: port)
    restarts += 1
}

// The clients finish on their own (bounded: killed after 5 minutes more).
var summaries: [[String: Int]] = []
var failures: [String] = []
for (index, worker) in workers.enumerated() {
    let watchdog = Watchdog(worker, seconds: Double(seconds + 300))
    let text = String(decoding: worker.standardOutput!.readDataToEndOfFile(), as: UTF8.self)
    let ended = worker.waitUntilExit()
    watchdog.cancel()
    guard ended == .exited(0), let line = text.split(separator: "\n").last(where: { $0.hasPrefix("summary ") }) else {
        failures.append("client \(index) \(ended)")
        continue
    }
    summaries.append(Dictionary(uniqueKeysWithValues: line.split(separator: " ").dropFirst().compactMap { pair -> (String, Int)? in
        let parts = pair.split(separator: "=")
        return parts.count == 2 ? (String(parts[0]), Int(parts[1]) ?? 0) : nil
    }))
}
proxy.stop()

// The ledgers: what each worker was told was stored.
let ledger = try Snapshot(ledgers: storages.map { $0.path + ".ledger" })
if CommandLine.arguments.contains("--tamper"), let victim = ledger.panoramas.keys.sorted().first {
    let deleted = try RawClient(port: port).request("DELETE", "/v1/panoramas/\(victim)", headers: ["Authorization": "Bearer \(token)"])
    say("tamper: acknowledged panorama \(victim) deleted from the server by hand (\(deleted.status))")
}
toursd.signal(SIGTERM)
_ = toursd.wait()

// The same, from every client database and from the server's.
var itemsNotDone = 0, failedWithAttemptsLeft = 0
var clientSide = Snapshot()
for storage in storages {
    let db = try Database(path: storage.appendingPathComponent("noughtytours.sqlite").path)
    clientSide.merge(try Snapshot(database: db, roomPosition: "position", floorMap: "world_map_sha256"))
    itemsNotDone += try db.first("SELECT count(*) FROM queue_items WHERE state != 'done'")?.decodeIfPresent(0, as: Int.self) ?? -1
    failedWithAttemptsLeft += try db.first("SELECT count(*) FROM queue_items WHERE state = 'failed' AND attempts < 3")?.decodeIfPresent(0, as: Int.self) ?? -1
}
let captured = ledger.panoramas.mapValues(\.sha256)

// What the server holds: rows, and files.
let server = try Database(path: dataDir + "/toursd.sqlite")
let serverSide = try Snapshot(database: server, roomPosition: "position", floorMap: "world_map_sha256")
let clientDifferences = ledger.differences(clientSide)
let serverDifferences = ledger.differences(serverSide)
var stored: [String: (tenant: Int64, sha256: String, size: Int64)] = [:]
for row in try server.query("SELECT tenant_id, id, sha256, size FROM panoramas") {
    stored[try row.decode(1, as: String.self)] = (try row.decode(0, as: Int64.self), try row.decode(2, as: String.self), try row.decode(3, as: Int64.self))
}
let losses = captured.keys.filter { stored[$0] == nil }.count
let strangers = stored.keys.filter { captured[$0] == nil }.count // on the server, captured by no one
let wrongDigest = captured.filter { id, digest in stored[id].map { $0.sha256 != digest } ?? false }.count
var rowsWithoutFile = 0, filesWrong = 0
for (id, row) in stored {
    let path = "\(dataDir)/blobs/\(row.tenant)/panoramas/\(id)"
    guard let data = FileManager.default.contents(atPath: path) else { rowsWithoutFile += 1; continue }
    if Int64(data.count) != row.size || ByteEncoding.hex(StreamingDigest.hash(.sha256, Array(data))) != row.sha256 { filesWrong += 1 }
}
let uploadRows = Set(try server.query("SELECT tenant_id, id FROM uploads").map { "\(try $0.decode(0, as: Int64.self))/\(try $0.decode(1, as: String.self))" })
// A world map's file is named by its row (older maps: by the floor id).
let worldMapRows = Set(try server.query("SELECT tenant_id, coalesce(world_map_file, id) FROM floors WHERE world_map_sha256 IS NOT NULL")
    .map { "\(try $0.decode(0, as: Int64.self))/\(try $0.decode(1, as: String.self))" })
var orphans: [String] = []
let blobs = dataDir + "/blobs"
for tenant in (try? FileManager.default.contentsOfDirectory(atPath: blobs)) ?? [] {
    for (kind, rows) in [("panoramas", Set(stored.filter { String($0.value.tenant) == tenant }.keys.map { "\(tenant)/\($0)" })),
                         ("uploads", uploadRows), ("worldmaps", worldMapRows)] {
        for file in (try? FileManager.default.contentsOfDirectory(atPath: "\(blobs)/\(tenant)/\(kind)")) ?? [] where !rows.contains("\(tenant)/\(file)") {
            orphans.append("\(kind)/\(tenant)/\(file)")
        }
    }
}
orphans += ((try? FileManager.default.contentsOfDirectory(atPath: dataDir + "/tmp")) ?? []).map { "tmp/\($0)" }

let total = { (key: String) in summaries.reduce(0) { $0 + ($1[key] ?? 0) } }
let faults = proxy.faults
say("""
    soak results after \(seconds) s, \(clients) clients:
      captured: \(total("properties")) properties, \(captured.count) panoramas; queue items uploaded: \(total("uploaded"))
      faults injected: \(faults[.reset, default: 0]) resets, \(faults[.stall, default: 0]) stalls, \(faults[.truncate, default: 0]) truncated answers; \
    toursd restarts (SIGKILL): \(restarts)
      attempts used: \(total("uploaded") + total("failedAttempts")) (\(total("failedAttempts")) failed), sync() taps: \(total("syncs"))
      duplicates: \(strangers), losses: \(losses), wrong digests: \(wrongDigest + filesWrong), rows without their file: \(rowsWithoutFile), \
    orphan files: \(orphans.count)
      items not done: \(itemsNotDone), failed with attempts left: \(failedWithAttemptsLeft + total("failedWithAttemptsLeft"))
      ledgers: \(ledger.summary); differences from the client databases: \(clientDifferences.count), from the server: \(serverDifferences.count)
    """)
for difference in clientDifferences.prefix(5) { say("  client database: \(difference)") }
for difference in serverDifferences.prefix(5) { say("  server: \(difference)") }
for orphan in orphans.prefix(10) { say("  orphan: \(orphan)") }
for failure in failures { say("  \(failure)") }
let bad = strangers + losses + wrongDigest + filesWrong + rowsWithoutFile + orphans.count + itemsNotDone + failedWithAttemptsLeft
    + clientDifferences.count + serverDifferences.count
    + total("failedWithAttemptsLeft") + failures.count
say(bad == 0 && !captured.isEmpty ? "soak: PASS" : "soak: FAIL")
try? FileManager.default.removeItem(at: work) // exit() runs no defer
exit(bad == 0 && !captured.isEmpty ? 0 : 1)
