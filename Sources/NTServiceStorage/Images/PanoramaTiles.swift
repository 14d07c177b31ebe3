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

/// The cube tiles of large panoramas (`tileMinWidth` wide or more), made in the background
/// once a panorama is stored and kept beside its previews: `previews/<tenant>/<panoramaId>/
/// tiles-<digest prefix>/<level>/<face><row>_<column>.jpg`, with a `pyramid` file saying the
/// face size and levels. The folder is made under a temporary name and renamed when whole, so
/// tiles are there all or not at all; the viewer draws the panorama's preview meanwhile.
///
/// The work runs on the image pool the previews are decoded on, one panorama at a time and in
/// steps (the decoding, then a face at a time), so a preview waits for one step at most; its
/// memory is held to `maxTileDecodeBytes`. A daemon that stops mid-way leaves a temporary
/// folder, removed by the next making, which the panorama's next viewing asks for.
package final class PanoramaTiles: Sendable {
    package let root: String
    package let io: ThreadPool
    package let images: ThreadPool
    /// The image memory previews and tilings share.
    package let memory: ImageMemory
    package let rule: TilingRule
    package let maxCpuNanoseconds: Int
    package let quality: Int
    package let maxSourcePixels: Int
    package let budget: DecodeBudget
    package let queueLimit: Int
    package let logger: Logger

    package init(root: String, io: ThreadPool, images: ThreadPool, memory: ImageMemory, rule: TilingRule, maxCpuNanoseconds: Int, quality: Int, maxSourcePixels: Int, budget: DecodeBudget, queueLimit: Int, logger: Logger) {
        self.root = root
        self.io = io
        self.images = images
        self.memory = memory
        self.rule = rule
        self.maxCpuNanoseconds = maxCpuNanoseconds
        self.quality = quality
        self.maxSourcePixels = maxSourcePixels
        self.budget = budget
        self.queueLimit = queueLimit
        self.logger = logger
    }
    /// Panoramas (tenant/id/digest) waiting for their tiles or being tiled.
    private let wanted = Mutex<Set<String>>([])
    /// Panoramas found too narrow (or unreadable) to tile: not read again each time their page
    /// is opened. Bounded: emptied when full, each then read once more.
    private let untiled = Mutex<Set<String>>([])
    private static let untiledLimit = 100_000
    /// One tiling at a time: its decoded planes are the largest memory toursd takes.
    private let turn = Checkout(count: 1)
    /// Panoramas tiled since start, and the CPU time their tiling took (`/metrics`).
    let made = Atomic<Int>(0)
    let cpuNanoseconds = Atomic<Int>(0)

    package init(dataDir: String, io: ThreadPool, images: ThreadPool, memory: ImageMemory, settings: ImageSettings, logger: Logger) {
        root = dataDir + "/previews"
        self.io = io
        self.images = images
        self.memory = memory
        self.logger = logger
        rule = TilingRule(minWidth: settings.tileMinWidth, maxAspectRatio: Double(settings.tileMaxAspectRatio), maxFaceSize: settings.maxTileFaceSize,
                          maxSpherePerImagePixel: settings.tileMaxSpherePerPixel)
        maxCpuNanoseconds = settings.maxTileCpuSeconds * 1_000_000_000
        quality = settings.quality
        maxSourcePixels = settings.maxSourcePixels
        budget = DecodeBudget(maxBytes: settings.maxTileDecodeBytes, maxScans: settings.maxScans, maxItems: settings.maxItems)
        queueLimit = settings.tileQueueLimit
    }

    /// Its lines of /metrics.
    package var metrics: String {
        """
        # HELP toursd_tile_sets_made_total Panoramas cut into cube tiles since start.
        # TYPE toursd_tile_sets_made_total counter
        toursd_tile_sets_made_total \(made.load(ordering: .relaxed))
        # HELP toursd_tile_cpu_seconds_total CPU time spent cutting panoramas into tiles.
        # TYPE toursd_tile_cpu_seconds_total counter
        toursd_tile_cpu_seconds_total \(String(format: "%.3f", Double(cpuNanoseconds.load(ordering: .relaxed)) / 1e9))
        # HELP toursd_tiles_waiting Panoramas waiting for their tiles or being tiled.
        # TYPE toursd_tiles_waiting gauge
        toursd_tiles_waiting \(wanted.withLock { $0.count })

        """
    }

    func directory(tenant: Int64, _ panorama: PanoramaRecord) -> String {
        "\(root)/\(tenant)/\(panorama.id)/tiles-\(panorama.sha256.prefix(16))"
    }

    /// The path of one tile of a tiled panorama.
    package func path(tenant: Int64, _ panorama: PanoramaRecord, level: Int, face: CubeFace, row: Int, column: Int) -> String {
        "\(directory(tenant: tenant, panorama))/\(level)/\(TilePyramid.tileName(face, row: row, column: column))"
    }

    /// The pyramid of a panorama whose tiles are made; nil while they are not (or never will be).
    package func pyramid(tenant: Int64, _ panorama: PanoramaRecord) async -> TilePyramid? {
        let file = directory(tenant: tenant, panorama) + "/pyramid"
        guard let text = try? await io.run({ FileManager.default.contents(atPath: file) }) else { return nil }
        let numbers = String(decoding: text, as: UTF8.self).split(separator: " ").compactMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        guard numbers.count == 2 else { return nil }
        return TilePyramid(faceSize: numbers[0], levels: numbers[1])
    }

    /// Asks for a panorama's tiles, made in the background unless already made or asked for;
    /// past `tileQueueLimit` waiting, the asking is dropped (the panorama's next viewing asks
    /// again). `stillStored`: whether the panorama is still there once its tiles are made.
    package func request(tenant: Int64, _ panorama: PanoramaRecord, source: @escaping PanoramaSource, stillStored: @escaping @Sendable () async -> Bool) {
        guard ImageFormat(mediaType: panorama.contentType) != nil else { return }
        let key = "\(tenant)/\(panorama.id)/\(panorama.sha256)"
        guard !untiled.withLock({ $0.contains(key) }) else { return }
        let accepted = wanted.withLock { wanted in
            guard !wanted.contains(key), wanted.count < queueLimit else { return false }
            wanted.insert(key)
            return true
        }
        guard accepted else { return }
        // On the file pool's threads, never Swift's shared cooperative ones (which blocking
        // callers may hold); out of the trace of the request that asked (it may take minutes).
        Task(executorPreference: io) { [self] in
            _ = await tile(key, tenant: tenant, panorama, source: source, stillStored: stillStored)
            _ = wanted.withLock { $0.remove(key) }
        }
    }

    /// Makes the panorama's tiles now, in the one turn every tiling takes, unless they are made:
    /// whether it has them after (false: not to be tiled, or not readable within the budget).
    /// A panorama's processing awaits this; a viewing asks with `request`.
    package func tiled(tenant: Int64, _ panorama: PanoramaRecord, source: @escaping PanoramaSource, stillStored: @escaping @Sendable () async -> Bool) async -> Bool {
        guard ImageFormat(mediaType: panorama.contentType) != nil else { return false }
        let key = "\(tenant)/\(panorama.id)/\(panorama.sha256)"
        // Counted among those waiting (`toursd_tiles_waiting`) while it is, unless a viewing's asking is.
        let counted = wanted.withLock { $0.insert(key).inserted }
        let made = await tile(key, tenant: tenant, panorama, source: source, stillStored: stillStored)
        if counted { _ = wanted.withLock { $0.remove(key) } }
        return made
    }

    private func tile(_ key: String, tenant: Int64, _ panorama: PanoramaRecord, source: @escaping PanoramaSource,
                      stillStored: @escaping @Sendable () async -> Bool) async -> Bool {
        let slot = await turn.take()
        let made = await Trace.$current.withValue(nil) { await make(tenant: tenant, panorama, source: source, stillStored: stillStored) }
        turn.giveBack(slot)
        if !made {
            untiled.withLock { untiled in
                if untiled.count >= Self.untiledLimit { untiled.removeAll() }
                untiled.insert(key)
            }
        }
        return made
    }

    /// Makes the tiles unless they are made; false when the panorama is not to be tiled (too
    /// narrow, or not readable as its format within the budget).
    private func make(tenant: Int64, _ panorama: PanoramaRecord, source: @escaping PanoramaSource, stillStored: @escaping @Sendable () async -> Bool) async -> Bool {
        guard await pyramid(tenant: tenant, panorama) == nil else { return true }
        let target = directory(tenant: tenant, panorama)
        let temporary = "\(target).tmp-\(UInt64.random(in: .min ... .max))"
        do {
            let source = try await source()
            let (rule, maxSourcePixels, budget) = (rule, maxSourcePixels, budget)
            guard let format = ImageFormat(mediaType: panorama.contentType),
                  let plan = try await io.run({ try MappedFile.read(source) { try CubeTiler.plan(format, $0, rule: rule, maxSourcePixels: maxSourcePixels, budget: budget) } })
            else { return false }
            let pyramid = plan.pyramid
            // Its share of the image memory, held from the decoding until the last face is cut.
            try await memory.holding(plan.memoryBytes, for: "cutting a panorama into tiles") {
                // Its planes are freed when this closure returns, before the share is given back.
                let (panoramaImage, decoding) = try await images.run { [self] in
                    try measured { try MappedFile.read(source) { try CubeTiler.decode($0, plan) } }
                }
                try await io.run { [self] in try prepare(temporary, levels: pyramid.levels, tenant: tenant, id: panorama.id) }
                var cpu = decoding
                for face in CubeFace.allCases {
                    guard cpu <= maxCpuNanoseconds else {
                        throw PreviewError("cutting it took more than maxTileCpuSeconds (\(maxCpuNanoseconds / 1_000_000_000) s) of CPU time")
                    }
                    let (tiles, spent) = try await images.run { [self] in try measured { try Self.cut(face, of: panoramaImage, plan, quality: quality) } }
                    cpu += spent
                    try await io.run {
                        for tile in tiles {
                            try Self.write(tile.jpeg, to: "\(temporary)/\(tile.level)/\(TilePyramid.tileName(face, row: tile.row, column: tile.column))")
                        }
                    }
                }
            }
            try await io.run {
                try Self.write(Array("\(pyramid.faceSize) \(pyramid.levels)\n".utf8), to: temporary + "/pyramid")
                try Self.syncDirectories(temporary, levels: pyramid.levels)
                guard rename(temporary, target) == 0 else { throw StorageError(.failed, "the tiles cannot be put in place: \(String(cString: strerror(errno)))") }
            }
            made.add(1, ordering: .relaxed)
            logger.info("a panorama is cut into tiles", ["panorama": panorama.id, "faceSize": "\(pyramid.faceSize)", "levels": "\(pyramid.levels)"])
            await removeIfDeleted(target, stillStored)
            return true
        } catch {
            logger.warn("a panorama cannot be cut into tiles: its preview stands in", ["panorama": panorama.id, "error": "\(error)"])
            _ = try? await io.run { try? FileManager.default.removeItem(atPath: temporary) }
            // Failed because it was deleted (its bytes went): the folder made for it goes too.
            await removeIfDeleted(target, stillStored)
            // Refused by the budget or unreadable: so it stays. Anything else (the disk, a
            // stop) may pass: asked again when next viewed.
            return !(error is PreviewError)
        }
    }

    /// A deletion that raced the making removed the panorama's folder before the tiles were
    /// in it: the folder (made again for them) goes with them.
    private func removeIfDeleted(_ target: String, _ stillStored: @Sendable () async -> Bool) async {
        guard !(await stillStored()) else { return }
        _ = try? await io.run { try? FileManager.default.removeItem(atPath: (target as NSString).deletingLastPathComponent) }
    }

    /// One face of a panorama at every level, largest first, as JPEG tiles.
    private static func cut(_ face: CubeFace, of panorama: PlanarImage, _ plan: TilingPlan, quality: Int) throws -> [(level: Int, row: Int, column: Int, jpeg: [UInt8])] {
        let pyramid = plan.pyramid
        var image = CubeTiler.face(face, of: panorama, size: pyramid.faceSize, geometry: plan.geometry)
        var tiles: [(level: Int, row: Int, column: Int, jpeg: [UInt8])] = []
        for level in (0..<pyramid.levels).reversed() {
            tiles += try CubeTiler.tiles(of: image, quality: quality).map { (level, $0.row, $0.column, $0.jpeg) }
            if level > 0 { image = CubeTiler.halved(image) }
        }
        return tiles
    }

    /// `body`, and its thread's CPU time, also added to the tilings' in all.
    private func measured<T>(_ body: () throws -> T) rethrows -> (T, Int) {
        let start = Self.threadCPUTime()
        let value = try body()
        let spent = Self.threadCPUTime() - start
        cpuNanoseconds.add(spent, ordering: .relaxed)
        return (value, spent)
    }

    private static func threadCPUTime() -> Int {
        var now = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
        return now.tv_sec * 1_000_000_000 + now.tv_nsec
    }

    /// The temporary folder and its levels' folders (0700, as every folder of the data
    /// directory), after removing what an earlier making left.
    private func prepare(_ temporary: String, levels: Int, tenant: Int64, id: String) throws {
        let panoramaDirectory = "\(root)/\(tenant)/\(id)"
        if let names = try? FileManager.default.contentsOfDirectory(atPath: panoramaDirectory) {
            for name in names where name.hasPrefix("tiles-") && name.contains(".tmp-") {
                try? FileManager.default.removeItem(atPath: "\(panoramaDirectory)/\(name)")
            }
        }
        for directory in [root, "\(root)/\(tenant)", panoramaDirectory, temporary] + (0..<levels).map({ "\(temporary)/\($0)" })
        where mkdir(directory, 0o700) != 0 && errno != EEXIST {
            throw StorageError(.failed, "\(directory) cannot be made: \(String(cString: strerror(errno)))")
        }
    }

    /// A file written whole and flushed: the folder is renamed into place only after all are.
    private static func write(_ bytes: [UInt8], to path: String) throws {
        guard FlushedFile.write(bytes, to: path, flags: O_TRUNC) else {
            throw StorageError(.failed, "a tile cannot be written: \(String(cString: strerror(errno)))")
        }
    }

    /// Flushes the folders' entries, so the renamed folder never names a tile that is not there.
    private static func syncDirectories(_ temporary: String, levels: Int) throws {
        for directory in (0..<levels).map({ "\(temporary)/\($0)" }) + [temporary] {
            let fd = Glibc.open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard fd >= 0 else { throw StorageError(.failed, "\(directory) cannot be opened: \(String(cString: strerror(errno)))") }
            defer { close(fd) }
            guard fsync(fd) == 0 else { throw StorageError(.failed, "\(directory) cannot be flushed: \(String(cString: strerror(errno)))") }
        }
    }
}
