import NTServiceHTTP
import NTServiceModel
import NTServiceStorage
import NTThreadPools
import NTTourUseCases
import NTUploads
import NTViewerService
import NTWebhooks

/// The service's own thread pools, made here only and each sized from the configuration: file
/// work, image decoding, webhook deliveries, and a bucket's transfers. The request handlers'
/// threads are the database's (sized by `sqliteReaders` or `databaseHandlerThreads`), the epoll
/// loops the HTTP layer's (`eventLoopThreads`). Each part stops the pool it is given.
/// (`/metrics` counts every thread by its pool's name: `ThreadCensus`.)
struct ServicePools {
    let files: ThreadPool
    let previews: ThreadPool
    let webhooks: ThreadPool

    /// `beforeEachFileJob` runs before every job of the file pool: tests make the disk slow with it.
    init(_ settings: PoolSettings, beforeEachFileJob: (@Sendable () -> Void)?) {
        files = ThreadPool(name: "file-io", threads: settings.ioThreads, niceness: Int32(settings.ioThreadNiceness), beforeEachJob: beforeEachFileJob)
        previews = ThreadPool(name: "previews", threads: settings.previewThreads, niceness: Int32(settings.ioThreadNiceness))
        webhooks = ThreadPool(name: "webhooks", threads: settings.webhookConcurrency)
    }

    /// A bucket's part transfers (only a deployment on a bucket has them).
    static func bucketTransfers(_ settings: PoolSettings) -> ThreadPool {
        ThreadPool(name: "s3", threads: settings.s3TransferThreads)
    }
}
