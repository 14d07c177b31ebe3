import NTLogging
import NTObjectStorage
import NTServiceHTTP
import NTServiceModel
import NTServiceStorage
import NTTourUseCases
import NTUploads
import NTViewerService
import NTWebhooks

/// The bucket's sweep, in the background every `bucketSweepSeconds`: one page of objects a
/// round (from where the last round stopped, back to the start at the end), asked of the
/// database in one query per tenant and kind, and every multipart upload in progress. Never
/// in a bucket this deployment does not own (`StoreOwnership`, asked each round), nor with
/// more orphans on one page than `orphanSweepLimit` (a database restored without its rows):
/// then it says so and removes nothing.
package final class BucketSweep: @unchecked Sendable {
    private let store: BucketBlobStore
    private let records: Records
    private let clock: any ServiceClock
    private let outages: OutageLog
    private let logger: Logger
    private let settings: SweepSettings
    /// The database's deployment id: the bucket it may sweep holds it.
    private let deploymentId: String
    /// Where the next round starts; rounds never overlap (one timer).
    private var cursor: String?
    private var firstSeen: [String: Int64] = [:]

    /// The database's name in what the operator is told.
    private let databaseName: String

    init(store: BucketBlobStore, records: Records, clock: any ServiceClock, outages: OutageLog, logger: Logger, settings: SweepSettings,
         deploymentId: String, databaseName: String) {
        (self.store, self.records, self.clock, self.outages, self.logger) = (store, records, clock, outages, logger)
        (self.settings, self.deploymentId, self.databaseName) = (settings, deploymentId, databaseName)
    }

    /// One round; what it removed, or nil when it refused.
    @discardableResult
    func round() async -> (objects: Int, uploads: Int)? {
        let now = clock.unixSeconds
        let grace = Int64(settings.orphanGraceSeconds)
        do {
            let start = cursor
            let page = try await store.calls { try $0.list("", startAfter: start, limit: BucketSweepPlan.pageSize) }
            cursor = page.count < BucketSweepPlan.pageSize ? nil : page.last?.key
            // Each round asks whose the bucket is first: only this deployment's is swept.
            let records = records
            let ownership = try await store.ownership(deployment: deploymentId, databaseName: databaseName, page: page) { keys in
                try await records.read { !(try await StoredFiles.named(among: keys, by: $0)).isEmpty }
            }
            if case .refused(let reason) = ownership {
                logger.warn("the bucket's sweep removes nothing", ["reason": reason])
                return nil
            }
            let keys = Set(page.compactMap { BucketSweepPlan.key(of: $0.key) })
            let named = try await records.read { try await StoredFiles.named(among: Array(keys), by: $0) }
            let orphans = BucketSweepPlan.orphans(page, named: named, now: now, grace: grace)
            let sweep = OrphanSweep(storedFiles: page.count, orphans: orphans.count, limit: settings.orphanSweepLimit)
            if let refusal = sweep.refusal(database: "the database", blobFolder: "the bucket \(store.bucket.settings.bucket)") {
                logger.warn("the bucket's sweep removes nothing", ["reason": refusal])
                return nil
            }
            try await store.calls { transfer in
                for object in orphans { try transfer.delete(object.key) }
            }
            let uploads = try await store.calls { try $0.multipartUploads("") }
            let stale = BucketSweepPlan.staleUploads(uploads, firstSeen: firstSeen, now: now, grace: grace)
            firstSeen = stale.firstSeen
            try await store.calls { transfer in
                for upload in stale.abort { try transfer.abortMultipart(upload.key, uploadId: upload.uploadId) }
            }
            if !orphans.isEmpty || !stale.abort.isEmpty {
                logger.warn("the bucket's sweep removed what interrupted writes left",
                                    ["objects": String(orphans.count), "multipartUploads": String(stale.abort.count)])
            }
            return (orphans.count, stale.abort.count)
        } catch {
            outages.failed("the bucket's sweep failed", error)
            return nil
        }
    }
}
