#if canImport(Glibc)
import Glibc
import NTSQLKit
#endif
import NTServiceModel
import Foundation
import NTImagePreviews
import NTLogging
import Synchronization
import NTThreadPools
import NTTracing

/// Previews of panoramas, made once and kept on disk: `previews/<tenant>/<panoramaId>/
/// <width>-<digest prefix>.jpg` under the data directory. The digest in the name means a
/// panorama id stored again with other bytes never gets an old preview; a panorama's directory
/// goes when the panorama does. A cache: written to a temporary name, fsynced and renamed, so
/// a crash leaves a whole preview or none, and a lost one is made again.
///
/// Decoding is the costliest thing toursd does for an anonymous visitor, so it is fenced in:
/// on a pool of its own (`previewThreads`), never the file pool uploads are written on; under
/// a memory and scan budget (`DecodeBudget`); one making per preview, however many ask at once
/// (they share its outcome; the making stays listed until its file is cached); and at most
/// `previewQueueLimit` distinct previews waiting, past which a request is told 503.
package final class PreviewCache: Sendable {
    package let root: String
    package let io: ThreadPool
    package let decoders: ThreadPool
    /// The image memory every preview and tiling of the daemon shares (`imageMemoryBytes`).
    package let memory: ImageMemory
    package let quality: Int
    package let maxSourcePixels: Int
    package let budget: DecodeBudget
    package let queueLimit: Int
    package let retryAfterSeconds: Int
    package let logger: Logger
    private let makings = Mutex<[String: Task<Making, any Error>]>([:])
    /// The placeholder of each width, made once: every unreadable panorama's is the same
    /// flat grey, and making one passes its whole canvas (24 MiB at 4096) through the encoder.
    private let placeholders = Mutex<[Int: [UInt8]]>([:])
    /// Panoramas decoded for previews since start, and the previews made of them (a width each,
    /// or the placeholder) (`/metrics`): what shows identical requests coalesced.
    let decodes = Atomic<Int>(0)
    let previewsMade = Atomic<Int>(0)
    /// With a bucket: previews made by any daemon, kept there too.
    package let shared: (any SharedPreviews)?

    package init(root: String, io: ThreadPool, decoders: ThreadPool, memory: ImageMemory, quality: Int, maxSourcePixels: Int, budget: DecodeBudget, queueLimit: Int, retryAfterSeconds: Int, logger: Logger, shared: (any SharedPreviews)?) {
        self.root = root
        self.io = io
        self.decoders = decoders
        self.memory = memory
        self.quality = quality
        self.maxSourcePixels = maxSourcePixels
        self.budget = budget
        self.queueLimit = queueLimit
        self.retryAfterSeconds = retryAfterSeconds
        self.logger = logger
        self.shared = shared
    }

    package init(dataDir: String, io: ThreadPool, decoders: ThreadPool, settings: ImageSettings, logger: Logger, shared: (any SharedPreviews)? = nil) {
        root = dataDir + "/previews"
        self.io = io
        self.shared = shared
        self.decoders = decoders
        memory = ImageMemory(limit: settings.memoryBytes)
        self.logger = logger
        quality = settings.quality
        maxSourcePixels = settings.maxSourcePixels
        budget = DecodeBudget(maxBytes: settings.maxPreviewDecodeBytes, maxScans: settings.maxScans, maxItems: settings.maxItems)
        queueLimit = settings.previewQueueLimit
        retryAfterSeconds = settings.retryAfterSeconds
    }

    package func stop() { decoders.stop() }

    /// An image that is not a panorama (a tenant's logo) made again from its pixels, at most
    /// `width` wide, as a JPEG without the file's metadata: checked, decoded and held as a
    /// panorama's previews are (`maxPreviewSourcePixels`, the decode budget, the image memory,
    /// the preview pool). A refusal says why.
    package func reencoded(_ bytes: [UInt8], _ format: ImageFormat, width: Int) async throws -> [UInt8] {
        let (maxSourcePixels, budget, quality) = (maxSourcePixels, budget, quality)
        let plan = try bytes.withUnsafeBytes { try ImagePreview.plan(format, $0, width: width, maxSourcePixels: maxSourcePixels, budget: budget) }
        let made = try await memory.holding(plan.memoryBytes, for: "an image \(width) wide") {
            try await decoders.run { try bytes.withUnsafeBytes { try ImagePreview.make(from: $0, plan, quality: quality, matte: .white) } }
        }
        guard let jpeg = made[width] else { throw PreviewError("the image was not made") }
        return jpeg
    }

    /// Its lines of /metrics.
    package var metrics: String {
        """
        # HELP toursd_preview_decodes_total Panoramas decoded for previews (identical requests share one; a processing's widths are made from one).
        # TYPE toursd_preview_decodes_total counter
        toursd_preview_decodes_total \(decodes.load(ordering: .relaxed))
        # HELP toursd_previews_made_total Previews made here, decoded or the placeholder (each panorama's width once).
        # TYPE toursd_previews_made_total counter
        toursd_previews_made_total \(previewsMade.load(ordering: .relaxed))
        # HELP toursd_image_memory_bytes Image memory held now by previews and tiles together (imageMemoryBytes).
        # TYPE toursd_image_memory_bytes gauge
        toursd_image_memory_bytes \(memory.inUse)
        # HELP toursd_image_memory_peak_bytes The most image memory held at once since start.
        # TYPE toursd_image_memory_peak_bytes gauge
        toursd_image_memory_peak_bytes \(memory.peak)
        # HELP toursd_previews_waiting Distinct previews being made or waiting to be.
        # TYPE toursd_previews_waiting gauge
        toursd_previews_waiting \(makings.withLock { $0.count })

        """
    }

    private func directory(tenant: Int64, id: String) -> String { "\(root)/\(tenant)/\(id)" }

    func path(tenant: Int64, _ panorama: PanoramaRecord, width: Int) -> String {
        "\(directory(tenant: tenant, id: panorama.id))/\(Self.fileName(panorama, width: width))"
    }

    private static func fileName(_ panorama: PanoramaRecord, width: Int) -> String {
        "\(width)-\(panorama.sha256.prefix(16)).jpg"
    }

    /// Its name among the shared previews.
    private static func sharedName(tenant: Int64, _ panorama: PanoramaRecord, width: Int) -> String {
        "\(tenant)/previews/\(panorama.id)/\(fileName(panorama, width: width))"
    }

    /// Beside the previews of a panorama that could not be read (the placeholder stood in): its
    /// pages say so instead of showing a grey box.
    private func unreadableMarker(tenant: Int64, _ panorama: PanoramaRecord) -> String {
        "\(directory(tenant: tenant, id: panorama.id))/unreadable-\(panorama.sha256.prefix(16))"
    }

    /// A preview as made: its bytes, and why they do not show the panorama (the placeholder's
    /// reason; nil when they do).
    struct MadePreview: Sendable {
        var bytes: [UInt8]
        var unreadable: String?
    }

    /// What a preview request is answered with: the cached file, or the preview just made.
    package enum Preview {
        case file(fd: Int32, size: Int64)
        case made([UInt8])
    }

    /// The preview of a stored panorama at `width`, made first from `source` when not cached.
    /// `stillStored` asks whether the panorama is still there once its preview is in the
    /// cache: a panorama deleted meanwhile takes that preview with it.
    package func preview(tenant: Int64, _ panorama: PanoramaRecord, width: Int, source: @escaping PanoramaSource,
                 stillStored: @escaping @Sendable () async -> Bool) async throws -> Preview {
        let target = path(tenant: tenant, panorama, width: width)
        if let opened = try await io.run({ Self.openFile(target) }) { return .file(fd: opened.fd, size: opened.size) }
        return .made(try await making(tenant: tenant, panorama, width: width, target: target, source: source, stillStored: stillStored).bytes)
    }

    /// Why the panorama cannot be shown (nil: it can): its preview at `width` made first when not
    /// cached (the panorama page waits for what its viewer will load anyway).
    package func unreadable(tenant: Int64, _ panorama: PanoramaRecord, width: Int, source: @escaping PanoramaSource,
                    stillStored: @escaping @Sendable () async -> Bool) async throws -> String? {
        let target = path(tenant: tenant, panorama, width: width), marker = unreadableMarker(tenant: tenant, panorama)
        // Cached: its marker's reason, or none.
        if let cached = try await io.run({ () -> String?? in access(target, F_OK) == 0 ? .some(Self.reason(marker)) : .none }) { return cached }
        return try await making(tenant: tenant, panorama, width: width, target: target, source: source, stillStored: stillStored).unreadable
    }

    /// Every width's preview of a panorama not cached yet, made from one decode (a PNG or HEIC
    /// is decoded whole: once for all its widths, not once each); why it cannot be shown (nil:
    /// it can). A panorama's processing, which makes one panorama's previews at a time in its
    /// own turn: it waits for no place among the `previewQueueLimit` a visitor's request takes.
    package func makeEach(tenant: Int64, _ panorama: PanoramaRecord, widths: [Int], source: @escaping PanoramaSource,
                  stillStored: @escaping @Sendable () async -> Bool) async throws -> String? {
        let marker = unreadableMarker(tenant: tenant, panorama)
        let targets = widths.map { (width: $0, target: path(tenant: tenant, panorama, width: $0)) }
        let missing = try await io.run { targets.filter { access($0.target, F_OK) != 0 } }
        guard !missing.isEmpty else { return try await io.run { Self.reason(marker) } }
        var reason: String?
        for making in try makings(tenant: tenant, panorama, missing, queued: false, source: source, stillStored: stillStored) {
            let made = try await making.value
            // Cached here and in the bucket before the panorama is said ready: any daemon then
            // serves these bytes.
            await made.cached.value
            reason = reason ?? made.preview.unreadable
        }
        return reason
    }

    /// The reason the marker at `path` holds; nil when there is none (a readable panorama's).
    /// A marker left empty (written before reasons were kept) still says unreadable.
    private static func reason(_ path: String) -> String? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return data.isEmpty ? "the image cannot be read" : String(decoding: data, as: UTF8.self)
    }

    /// The one making of `target`: joined when under way, started when not (or 503 when too
    /// many are waiting).
    private func making(tenant: Int64, _ panorama: PanoramaRecord, width: Int, target: String, source: @escaping PanoramaSource,
                        stillStored: @escaping @Sendable () async -> Bool) async throws -> MadePreview {
        guard let making = try makings(tenant: tenant, panorama, [(width, target)], queued: true, source: source, stillStored: stillStored).first else {
            throw StorageError(.failed, "no making of \(target) was found or started")
        }
        return try await making.value.preview
    }

    /// A making's preview, and its caching (the file written, and kept in the bucket), which
    /// goes on after its askers are answered.
    private struct Making: Sendable {
        let preview: MadePreview
        let cached: Task<Void, Never>
    }

    /// The one making of each target: joined when under way; those not under way started
    /// together, from one decode (or, when `queued`, 503 if too many are waiting). Their askers
    /// are answered once they are made; each stays listed until its file is cached, so that a
    /// request meanwhile takes these bytes rather than decoding again.
    private func makings(tenant: Int64, _ panorama: PanoramaRecord, _ targets: [(width: Int, target: String)], queued: Bool,
                         source: @escaping PanoramaSource, stillStored: @escaping @Sendable () async -> Bool) throws -> [Task<Making, any Error>] {
        // A making removes itself under this lock, which is held here until they are entered.
        try makings.withLock { inFlight throws(StorageError) -> [Task<Making, any Error>] in
            let fresh = targets.filter { inFlight[$0.target] == nil }
            guard !queued || fresh.isEmpty || inFlight.count < queueLimit else {
                throw StorageError(.unavailable, "too many previews are being made; try again shortly", retryAfterSeconds: retryAfterSeconds)
            }
            // On the file pool's threads, never Swift's shared cooperative ones (which blocking
            // callers may hold): what they await then runs where it belongs.
            if !fresh.isEmpty {
                let decoding = Task(executorPreference: io) { [self] in try await decode(tenant: tenant, panorama, widths: fresh.map(\.width), source: source) }
                for (width, target) in fresh {
                    inFlight[target] = Task(executorPreference: io) { [self] in
                        let made: MadePreview, origin: Origin
                        do {
                            (made, origin) = try Self.one(width, of: try await decoding.value)
                        } catch {
                            _ = makings.withLock { $0.removeValue(forKey: target) }
                            throw error
                        }
                        let cached = Task(executorPreference: io) { [self] in
                            if origin != .cached {
                                await cache(made, tenant: tenant, panorama, width: width, origin: origin, target: target, stillStored: stillStored)
                            }
                            _ = makings.withLock { $0.removeValue(forKey: target) }
                        }
                        return Making(preview: made, cached: cached)
                    }
                }
            }
            return targets.compactMap { inFlight[$0.target] }
        }
    }

    /// Where a making's preview came from.
    private enum Origin {
        /// This daemon's cache: a making that ended between this request's look and its turn.
        case cached
        /// Another daemon's, kept in the bucket.
        case fetched
        /// Decoded here, on the preview pool.
        case decoded
    }

    /// The preview of `width` among those `decode` gave.
    private static func one(_ width: Int, of made: [Int: (MadePreview, Origin)]) throws -> (MadePreview, Origin) {
        guard let preview = made[width] else { throw StorageError(.failed, "no \(width)-wide preview was made") }
        return preview
    }

    /// The previews of `widths`: each cached or fetched, the rest decoded together on the preview pool.
    private func decode(tenant: Int64, _ panorama: PanoramaRecord, widths: [Int], source: @escaping PanoramaSource) async throws -> [Int: (MadePreview, Origin)] {
        let marker = unreadableMarker(tenant: tenant, panorama)
        var found: [Int: (MadePreview, Origin)] = [:]
        for width in widths {
            let target = path(tenant: tenant, panorama, width: width)
            if let cached = try await io.run({ () -> MadePreview? in
                FileManager.default.contents(atPath: target).map { MadePreview(bytes: Array($0), unreadable: Self.reason(marker)) }
            }) {
                found[width] = (cached, .cached)
            } else if let bytes = await shared?.fetchPreview(Self.sharedName(tenant: tenant, panorama, width: width)) {
                // Made by another daemon: cached here too, not decoded again.
                found[width] = (MadePreview(bytes: bytes, unreadable: nil), .fetched)
            }
        }
        let rest = widths.filter { found[$0] == nil }
        guard !rest.isEmpty else { return found }
        for (width, made) in try await makePreviews(panorama, widths: rest, source: try await source()) { found[width] = (made, .decoded) }
        decodes.add(1, ordering: .relaxed)
        previewsMade.add(rest.count, ordering: .relaxed)
        return found
    }

    /// Caches a preview just made, then checks it against a deletion that raced it (the
    /// deletion removes the row, then the folder; this writes the file, then asks for the row:
    /// one of the two always sees the other).
    private func cache(_ made: MadePreview, tenant: Int64, _ panorama: PanoramaRecord, width: Int, origin: Origin, target: String,
                       stillStored: @escaping @Sendable () async -> Bool) async {
        let marker = unreadableMarker(tenant: tenant, panorama)
        do {
            // The marker first: a cached preview without one is a readable panorama's.
            if let reason = made.unreadable { try await io.run { [self] in try write(Array(reason.utf8), to: marker, tenant: tenant, id: panorama.id) } }
            try await io.run { [self] in try write(made.bytes, to: target, tenant: tenant, id: panorama.id) }
        } catch {
            logger.warn("a preview cannot be cached", ["panorama": panorama.id, "error": "\(error)"])
        }
        // For the other daemons (a placeholder is cheaper made again than fetched).
        if origin == .decoded, made.unreadable == nil, let shared {
            do {
                try await shared.keepPreview(Self.sharedName(tenant: tenant, panorama, width: width), made.bytes)
            } catch {
                logger.warn("a preview cannot be kept in the bucket; the other daemons make it again", ["panorama": panorama.id, "error": "\(error)"])
            }
        }
        if !(await stillStored()) { await remove(tenant: tenant, ids: [panorama.id]) }
    }

    /// A JPEG, PNG or HEIC panorama's previews of `widths`, decoded once on the preview pool with
    /// its share of the image memory held (asked from its headers first); an image that cannot
    /// be read or is over the budgets gets the placeholder (panoramas are 2:1), with the reason.
    private func makePreviews(_ panorama: PanoramaRecord, widths: [Int], source: String) async throws -> [Int: MadePreview] {
        var reason = "no preview is made of \(panorama.contentType)"
        if let format = ImageFormat(mediaType: panorama.contentType) {
            do {
                let (maxSourcePixels, budget, quality) = (maxSourcePixels, budget, quality)
                let plan = try await io.run {
                    try MappedFile.read(source) { try ImagePreview.plan(format, $0, widths: widths, maxSourcePixels: maxSourcePixels, budget: budget) }
                }
                let listed = widths.map(String.init).joined(separator: ",")
                return try await Trace.span("image preview", attributes: [("widths", listed)]) {
                    try await memory.holding(plan.memoryBytes, for: "previews \(listed) wide") {
                        try await decoders.run { try MappedFile.read(source) { try ImagePreview.make(from: $0, plan, quality: quality) } }
                    }
                }.mapValues { MadePreview(bytes: $0, unreadable: nil) }
            } catch let error as PreviewError {
                logger.warn("a panorama's preview cannot be made: the placeholder stands in", ["panorama": panorama.id, "error": error.message])
                reason = error.message
            }
        }
        var made: [Int: MadePreview] = [:]
        for width in widths {
            made[width] = MadePreview(bytes: try await placeholder(width: width), unreadable: reason)
        }
        return made
    }

    /// The placeholder `width` wide (panoramas are 2:1), made on the preview pool the first time.
    private func placeholder(width: Int) async throws -> [UInt8] {
        if let bytes = placeholders.withLock({ $0[width] }) { return bytes }
        let quality = quality
        let bytes: [UInt8]
        do {
            bytes = try await decoders.run { try JPEGPreview.placeholder(width: width, height: width / 2, quality: quality) }
        } catch {
            throw StorageError(.failed, "the placeholder cannot be made: \(error)")
        }
        placeholders.withLock { $0[width] = bytes }
        return bytes
    }

    private func write(_ bytes: [UInt8], to target: String, tenant: Int64, id: String) throws {
        // Private like every file of the data directory: 0700 folders, 0600 files.
        for directory in [root, "\(root)/\(tenant)", directory(tenant: tenant, id: id)] where mkdir(directory, 0o700) != 0 && errno != EEXIST {
            throw StorageError(.failed, "\(directory) cannot be made: \(String(cString: strerror(errno)))")
        }
        let temporary = "\(target).\(UInt64.random(in: .min ... .max)).tmp"
        guard FlushedFile.write(bytes, to: temporary, flags: O_EXCL), rename(temporary, target) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw StorageError(.failed, "a preview cannot be written: \(reason)")
        }
    }

    /// The file at `path` opened for reading, with its size; nil when it is not there.
    package static func openFile(_ path: String) -> (fd: Int32, size: Int64)? {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            close(fd)
            return nil
        }
        return (fd, Int64(info.st_size))
    }

    /// At start-up, after the stored files are accounted for: removes the folders of
    /// panoramas that have no row (a deletion that stopped before its folder went), and in the
    /// others what a making left half-done (a preview's temporary file, a temporary tiles
    /// folder). All of it is derived, made again when asked for. Returns how many went.
    package func sweep(keeping panoramas: Set<BlobKey>) -> Int {
        let files = FileManager.default
        var removed = 0
        func remove(_ path: String) {
            if (try? files.removeItem(atPath: path)) != nil { removed += 1 }
        }
        for tenantName in (try? files.contentsOfDirectory(atPath: root)) ?? [] {
            guard let tenant = Int64(tenantName) else { continue }
            for id in (try? files.contentsOfDirectory(atPath: "\(root)/\(tenantName)")) ?? [] {
                let folder = "\(root)/\(tenantName)/\(id)"
                guard panoramas.contains(BlobKey(tenant: tenant, kind: .panorama, id: id)) else {
                    remove(folder)
                    continue
                }
                for name in (try? files.contentsOfDirectory(atPath: folder)) ?? [] where name.hasSuffix(".tmp") || name.contains(".tmp-") {
                    remove("\(folder)/\(name)")
                }
            }
        }
        return removed
    }

    /// Removes the previews of panoramas that are gone (those kept in a bucket too).
    package func remove(tenant: Int64, ids: [String]) async {
        _ = try? await io.run { [self] in
            for id in ids { try? FileManager.default.removeItem(atPath: directory(tenant: tenant, id: id)) }
        }
        await shared?.removePreviews(tenant: tenant, ids: ids)
    }
}

/// A new file (0600, as every file of the data directory) written whole and fsynced; false
/// with `errno` set when it could not be.
enum FlushedFile {
    static func write(_ bytes: [UInt8], to path: String, flags: Int32) -> Bool {
        let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_CLOEXEC | flags, 0o600)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var written = 0
        return bytes.withUnsafeBytes { raw -> Bool in
            while written < raw.count {
                let count = Glibc.write(fd, raw.baseAddress! + written, raw.count - written)
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return false }
                written += count
            }
            return fsync(fd) == 0
        }
    }
}

/// Gives the path of a local file holding a panorama's bytes (the store's own, or a copy).
package typealias PanoramaSource = @Sendable () async throws -> String

/// Where one daemon's previews are kept for the others: a bucket's `<tenant>/previews/<id>/`,
/// beside the panorama. A name holds the panorama's digest, so nothing there is ever stale.
package protocol SharedPreviews: Sendable {
    /// The preview named so, or nil (not made yet, or the store unreachable: then made here).
    func fetchPreview(_ name: String) async -> [UInt8]?
    /// Throws what the store said; the preview is then made again where it is asked for.
    func keepPreview(_ name: String, _ bytes: [UInt8]) async throws
    func removePreviews(tenant: Int64, ids: [String]) async
}

/// A file mapped read-only for the length of one call: a panorama of hundreds of MB is read
/// by the page cache, never copied into the heap.

package enum MappedFile {
    package static func read<T>(_ path: String, _ body: (UnsafeRawBufferPointer) throws -> T) throws -> T {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw StorageError(.failed, "\(path) cannot be opened: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw StorageError(.failed, "\(path) cannot be read: \(String(cString: strerror(errno)))") }
        let size = Int(info.st_size)
        guard size > 0 else { return try body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        guard let address = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0), address != MAP_FAILED else {
            throw StorageError(.failed, "\(path) cannot be mapped: \(String(cString: strerror(errno)))")
        }
        defer { munmap(address, size) }
        return try body(UnsafeRawBufferPointer(start: address, count: size))
    }
}
