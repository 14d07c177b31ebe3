import NTAPIModel
import NTImagePreviews
import NTThreadPools
import NTTracing
import Synchronization

/// The panoramas a daemon is processing or has waiting: one at a time (its previews decode on
/// the pool visitors' previews do, so a visitor waits for one decode at most), at most
/// `processingQueueLimit` waiting. One past the limit, or one its daemon stopped before it
/// finished, stays `processing` until the sweep takes it.
final class ProcessingQueue: Sendable {
    private let turn = Checkout(count: 1)
    /// Panoramas (tenant/id/digest) waiting or being processed here.
    private let waiting = Mutex<Set<String>>([])
    let limit: Int

    init(limit: Int) { self.limit = limit }

    /// Lists the panorama as waiting, at once; false when it is already or too many are.
    func admit(_ key: String) -> Bool {
        waiting.withLock { waiting in
            guard !waiting.contains(key), waiting.count < limit else { return false }
            waiting.insert(key)
            return true
        }
    }

    /// Runs `body` for a panorama `admit` listed, in the turn; then it is no longer listed.
    func inTurn(_ key: String, _ body: () async -> Void) async {
        let slot = await turn.take()
        await body()
        turn.giveBack(slot)
        _ = waiting.withLock { $0.remove(key) }
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

extension ServiceContext {
    /// A panorama just stored: listed as processing before its upload is answered (so
    /// `/metrics` counts it at once), processed in the background, a span of the upload's trace
    /// that may end long after the upload's own.
    func panoramaStored(_ tenant: Int64, _ panorama: PanoramaRecord) {
        let key = Self.processingKey(tenant, panorama)
        guard processing.admit(key) else { return }
        Task(executorPreference: blobs.io) { await Trace.span("panorama processing") { await self.process(admitted: key, tenant, panorama) } }
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
        guard processing.admit(key) else { return }
        await process(admitted: key, tenant, panorama)
    }

    private func process(admitted key: String, _ tenant: Int64, _ panorama: PanoramaRecord) async {
        await processing.inTurn(key) {
            do {
                let reason = try await previews.makeEach(tenant: tenant, panorama, widths: config.previewWidths, source: previewSource(tenant, panorama),
                                                         stillStored: stillStored(tenant, panorama))
                let tiled = reason == nil ? await tiles.tiled(tenant: tenant, panorama, source: previewSource(tenant, panorama),
                                                               stillStored: stillStored(tenant, panorama)) : false
                let geometry = try await fileGeometry(tenant, panorama)
                let (widths, unreadable) = (config.previewWidths, reason)
                try await write {
                    try await TourStore.recordProcessed($0, tenant, panorama, unreadable: unreadable, geometry: geometry, previews: widths, tiled: tiled, at: self.clock.now())
                }
            } catch {
                logger.warn("a panorama's processing stopped: the sweep tries again while it is stored", ["panorama": panorama.id, "error": "\(error)"])
            }
        }
    }

    /// What the panorama's file says of how it is drawn (the geometry its previews and tiles
    /// were made with), from its headers.
    private func fileGeometry(_ tenant: Int64, _ panorama: PanoramaRecord) async throws -> PanoramaFileGeometry {
        guard let format = ImageFormat(mediaType: panorama.contentType) else { return PanoramaFileGeometry() }
        let (path, maxItems) = (try await previewSource(tenant, panorama)(), config.maxPreviewItems)
        return PanoramaFileGeometry(try await blobs.io.run { try MappedFile.read(path) { PanoramaGeometry.read(format, $0, maxItems: maxItems) } })
    }

    /// Panoramas still processing that were stored more than `processingRetrySeconds` ago (their
    /// daemon stopped, or had too many waiting), processed again: the sweep's.
    func processUnfinished() async {
        let cutoff = Timestamp.text(clock.now(), plus: -config.processingRetrySeconds)
        do {
            for (tenant, panorama) in try await readOne({ try await TourStore.unfinishedPanoramas($0, storedBefore: cutoff, limit: 100) }) {
                await process(tenant, panorama)
            }
        } catch {
            failed("the sweep of unfinished panoramas failed", error)
        }
    }
}

extension PanoramaFileGeometry {
    /// What the headers gave, as the panorama document shows it.
    init(_ geometry: PanoramaGeometry) {
        self.init(projection: geometry.projection,
                  crop: geometry.crop.map { Crop(fullWidth: $0.fullWidth, fullHeight: $0.fullHeight, left: $0.left, top: $0.top, width: $0.width, height: $0.height) },
                  heading: geometry.heading, orientation: geometry.orientation?.rawValue)
    }
}
