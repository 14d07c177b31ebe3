import NTAPIModel
import NTImagePreviews
import NTLogging
import NTServiceModel
import NTServiceStorage
import NTThreadPools
import NTTracing
import Synchronization

/// The panoramas a daemon is processing or has waiting: one at a time (its previews decode on
/// the pool visitors' previews do, so a visitor waits for one decode at most), at most
/// `processingQueueLimit` waiting. One past the limit, or one its daemon stopped before it
/// finished, stays `processing` until the sweep takes it.
package final class ProcessingQueue: Sendable {
    private let turn = Checkout(count: 1)
    /// Panoramas (tenant/id/digest) waiting or being processed here.
    private let waiting = Mutex<Set<String>>([])
    let limit: Int

    package init(limit: Int) { self.limit = limit }

    /// Lists the panorama as waiting, at once; false when it is already or too many are.
    func admit(_ key: String) -> Bool {
        waiting.withLock { waiting in
            guard !waiting.contains(key), waiting.count < limit else { return false }
            waiting.insert(key)
            return true
        }
    }

    /// Runs `body` for a panorama `admit` listed, in the turn; then it is no longer listed.
    /// The last one's end gives back the memory the decodes freed.
    func inTurn(_ key: String, _ body: () async -> Void) async {
        let slot = await turn.take()
        await body()
        turn.giveBack(slot)
        let drained = waiting.withLock { waiting in
            waiting.remove(key)
            return waiting.isEmpty
        }
        if drained { FreedMemory.giveBack() }
    }

    /// Its lines of /metrics.
    var metrics: String {
        """
        # HELP toursd_panoramas_processing Stored panoramas waiting for their previews and tiles, or having them made, in this daemon.
        # TYPE toursd_panoramas_processing gauge
        toursd_panoramas_processing \(waiting.withLock { $0.count })

        """
    }
}

/// A stored panorama's images: its previews and tiles made once by its processing (in the
/// daemon's queue), and after that found for a page or a request; what came of the processing
/// recorded with its event. Knows no HTTP.
package struct PanoramaImages: Sendable {
    package let records: Records
    package let blobs: any BlobStore
    package let previews: PreviewCache
    package let tiles: PanoramaTiles
    package let queue: ProcessingQueue
    package let clock: any ServiceClock
    package let logger: Logger
    package let outages: OutageLog
    package let settings: ImageSettings

    package init(records: Records, blobs: any BlobStore, previews: PreviewCache, tiles: PanoramaTiles, queue: ProcessingQueue, clock: any ServiceClock, logger: Logger, outages: OutageLog, settings: ImageSettings) {
        self.records = records
        self.blobs = blobs
        self.previews = previews
        self.tiles = tiles
        self.queue = queue
        self.clock = clock
        self.logger = logger
        self.outages = outages
        self.settings = settings
    }

    /// A panorama just stored: listed as processing before its upload is answered (so
    /// `/metrics` counts it at once), processed in the background, a span of the upload's trace
    /// that may end long after the upload's own.
    package func stored(_ tenant: Int64, _ panorama: PanoramaRecord) {
        let key = Self.processingKey(tenant, panorama)
        guard queue.admit(key) else { return }
        Task(executorPreference: blobs.io) { await Trace.span("panorama processing") { await process(admitted: key, tenant, panorama) } }
    }

    private static func processingKey(_ tenant: Int64, _ panorama: PanoramaRecord) -> String {
        [String(tenant), panorama.id, panorama.sha256].joined(separator: "/")
    }

    /// A panorama's processing (docs/api.md "Panorama"), in the daemon's processing queue: its
    /// previews made (every width the viewer asks for, from one decode), then its tiles when it
    /// is large enough (an unreadable one has none), then what came of it recorded with its
    /// event, once across daemons. A failure of storage leaves it processing, for the sweep to
    /// try again (a panorama deleted meanwhile has no row left to record).
    func process(_ tenant: Int64, _ panorama: PanoramaRecord) async {
        let key = Self.processingKey(tenant, panorama)
        guard queue.admit(key) else { return }
        await process(admitted: key, tenant, panorama)
    }

    private func process(admitted key: String, _ tenant: Int64, _ panorama: PanoramaRecord) async {
        await queue.inTurn(key) {
            do {
                let widths = settings.previewWidths
                let reason = try await previews.makeEach(tenant: tenant, panorama, widths: widths, source: source(tenant, panorama),
                                                         stillStored: stillStored(tenant, panorama))
                let tiled = reason == nil ? await tiles.tiled(tenant: tenant, panorama, source: source(tenant, panorama),
                                                               stillStored: stillStored(tenant, panorama)) : false
                let (geometry, capturedAt) = try await fileMetadata(tenant, panorama)
                let now = clock.now()
                try await records.write {
                    try await TourStore.recordProcessed($0, tenant, panorama, unreadable: reason, geometry: geometry, capturedAt: capturedAt, previews: widths,
                                                        tiled: tiled, at: now)
                }
            } catch {
                logger.warn("a panorama's processing stopped: the sweep tries again while it is stored", ["panorama": panorama.id, "error": "\(error)"])
            }
        }
    }

    /// What the panorama's file says of how it is drawn (the geometry its previews and tiles
    /// were made with) and when it was taken (its walk's order), from its headers.
    private func fileMetadata(_ tenant: Int64, _ panorama: PanoramaRecord) async throws -> (PanoramaFileGeometry, capturedAt: String?) {
        guard let format = ImageFormat(mediaType: panorama.contentType) else { return (PanoramaFileGeometry(), nil) }
        let (path, maxItems) = (try await source(tenant, panorama)(), settings.maxItems)
        let (geometry, capturedAt) = try await blobs.io.run {
            try MappedFile.read(path) { (PanoramaGeometry.read(format, $0, maxItems: maxItems), CaptureTime.read(format, $0, maxItems: maxItems)) }
        }
        return (PanoramaFileGeometry(geometry), capturedAt)
    }

    /// Panoramas still processing that were stored more than `processingRetrySeconds` ago (their
    /// daemon stopped, or had too many waiting), processed again: the sweep's.
    package func processUnfinished() async {
        let cutoff = Timestamp.text(clock.now(), plus: -settings.processingRetrySeconds)
        do {
            for (tenant, panorama) in try await records.readOne({ try await TourStore.unfinishedPanoramas($0, storedBefore: cutoff, limit: 100) }) {
                await process(tenant, panorama)
            }
        } catch {
            outages.failed("the sweep of unfinished panoramas failed", error)
        }
    }

    /// Whether a panorama can be shown: its preview at `width` made first when not cached.
    package func isReadable(_ tenant: Int64, _ panorama: PanoramaRecord, width: Int) async throws -> Bool {
        try await previews.unreadable(tenant: tenant, panorama, width: width, source: source(tenant, panorama),
                                      stillStored: stillStored(tenant, panorama)) == nil
    }

    /// The tile pyramid of a panorama whose tiles are made; nil while they are not, and then
    /// asked for (a daemon stopped mid-way, or too many waiting, when it was stored).
    package func pyramid(_ tenant: Int64, _ panorama: PanoramaRecord) async -> TilePyramid? {
        if let pyramid = await tiles.pyramid(tenant: tenant, panorama) { return pyramid }
        tiles.request(tenant: tenant, panorama, source: source(tenant, panorama), stillStored: stillStored(tenant, panorama))
        return nil
    }

    /// The preview at `width`, from its file, or made first when it is not cached.
    package func preview(_ tenant: Int64, _ panorama: PanoramaRecord, width: Int) async throws -> PreviewCache.Preview {
        try await previews.preview(tenant: tenant, panorama, width: width, source: source(tenant, panorama), stillStored: stillStored(tenant, panorama))
    }

    /// One tile's file, opened (its descriptor and size); nil when it is not there.
    package func tile(_ tenant: Int64, _ panorama: PanoramaRecord, level: Int, face: CubeFace, row: Int, column: Int) async throws -> (fd: Int32, size: Int64)? {
        let path = tiles.path(tenant: tenant, panorama, level: level, face: face, row: row, column: column)
        return try await tiles.io.run { PreviewCache.openFile(path) }
    }

    /// A tenant's logo made again from its pixels (`PreviewCache.reencoded`).
    func logo(_ bytes: [UInt8], _ format: ImageFormat, width: Int) async throws -> [UInt8] {
        try await previews.reencoded(bytes, format, width: width)
    }

    /// The previews and tiles of panoramas gone.
    func remove(tenant: Int64, ids: [String]) async {
        await previews.remove(tenant: tenant, ids: ids)
    }

    /// Where the panorama's bytes are read from: a local file of the store's.
    private func source(_ tenant: Int64, _ panorama: PanoramaRecord) -> PanoramaSource {
        { [blobs] in try await blobs.localFile(BlobKey(tenant: tenant, kind: .panorama, id: panorama.id), sha256: panorama.sha256) }
    }

    /// Whether the panorama is still stored with these bytes, for a preview made meanwhile.
    private func stillStored(_ tenant: Int64, _ panorama: PanoramaRecord) -> @Sendable () async -> Bool {
        { [records] in
            // A read that fails leaves the preview: the panorama's deletion removes it then.
            (try? await records.read { try await TourStore.panorama($0, tenant, panorama.id) }).map { $0?.sha256 == panorama.sha256 } ?? true
        }
    }

    /// The lines of /metrics of the images' parts.
    package var metrics: String { previews.metrics + tiles.metrics + queue.metrics }
}

extension PanoramaFileGeometry {
    /// What the headers gave, as the panorama document shows it.
    package init(_ geometry: PanoramaGeometry) {
        self.init(projection: geometry.projection,
                  crop: geometry.crop.map { Crop(fullWidth: $0.fullWidth, fullHeight: $0.fullHeight, left: $0.left, top: $0.top, width: $0.width, height: $0.height) },
                  heading: geometry.heading, orientation: geometry.orientation?.rawValue)
    }
}
