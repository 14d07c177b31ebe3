import NTServiceModel
import NTSQLKit
import NTThreadPools

/// Where panoramas, world maps and resumable uploads' bytes are kept: a folder
/// (`DirectoryBlobStore`, the default) or an S3-compatible bucket (`BucketBlobStore`), chosen by
/// `blobStore`. Both keep the same promise: a blob is whole and durable in its place before the
/// transaction that makes a row point at it, and is placed only where nothing is, so the
/// row's commit is the single switch. Bodies are received into a local folder of this daemon's
/// first (`incoming`), hashed on the way, and only then placed.
package protocol BlobStore: AnyObject, Sendable {
    /// The pool every disk call runs on.
    var io: ThreadPool { get }
    /// Where bodies are received before they are placed.
    var incoming: IncomingFolder { get }
    /// Why the store cannot be reached, as it last saw (read without I/O; /healthz).
    var unavailableReason: String? { get }
    /// Its lines of /metrics (a bucket's requests by operation; none for the folder).
    var metrics: String { get }

    /// Lets its threads (the file pool, a bucket's transfers) go once their work is done.
    func stop()

    /// Receives a request body into a new local file, hashed as it arrives, to be placed as
    /// `key` (a bucket sends its parts there while the body still arrives).
    func receive(_ body: some ByteStream, toward key: BlobKey) async throws -> ReceivedBlob

    /// Puts a received file in place as `key`, durably; false when a blob is there already
    /// (nothing is replaced; the received file stays the caller's).
    func place(_ received: ReceivedBlob, as key: BlobKey) async throws -> Bool

    /// Removes stored blobs (after the commit that stopped pointing at them); one missing is
    /// not an error (a crash may have removed it).
    func remove(_ keys: [BlobKey]) async

    /// A descriptor of a local file holding `range` of the blob's `size` bytes (sendfile reads
    /// it), and where in it the range starts; the caller owns it. `sha256`: the digest the
    /// blob's row records.
    func openForReading(_ key: BlobKey, sha256: String, range: Range<Int64>, of size: Int64) async throws -> (fd: Int32, offset: Int64)

    /// Where a client may fetch the blob itself for a while (a presigned URL), or nil: then
    /// toursd sends it.
    func readURL(_ key: BlobKey) -> String?

    /// The path of a local file holding the blob's bytes, for the previews and tiles to map.
    func localFile(_ key: BlobKey, sha256: String) async throws -> String

    /// The partial bytes of resumable upload `key`, created empty when new: as far as their
    /// own record of what is durable says (`partialsKeepTheirOffset`), or else as the
    /// database last recorded them (`recordedOffset`). Bytes past that were never acknowledged
    /// and are written over. `capacity`: the most bytes the upload may hold.
    func openPartial(_ key: BlobKey, recordedOffset: Int64, capacity: Int64) async throws -> any PartialBlob

    /// Whether a partial blob made durable records its offset itself, in the same flush as its
    /// bytes (`PartialFile`): a daemon opening it finds the offset there, so the database's
    /// record of it need not be durable at once (a crash may take that back; the blob says
    /// more). False: the database's record is what a daemon opening the upload goes by.
    var partialsKeepTheirOffset: Bool { get }

    /// Gives a finished resumable upload's bytes the name `key` too, keeping the partial ones
    /// until the commit: a crash before it loses nothing acknowledged. False when `key` is
    /// taken. The partial bytes' own record of their offset goes: the database's, durable
    /// before this is asked, says it from here on.
    func finish(partial: BlobKey, length: Int64, as key: BlobKey) async throws -> Bool

    /// The first bytes of a finished upload's partial bytes: what its type is told by.
    func head(partial: BlobKey) async throws -> [UInt8]
}

extension BlobStore {
    /// Drops a received file nobody will place (and the parts sent for it); gone before the
    /// answer says so.
    package func discard(_ received: ReceivedBlob) async {
        await received.streamed?.abort()
        await incoming.discard(received)
    }

    /// Puts a received file in place under a name nobody else uses (a fresh random one);
    /// the received file is dropped if that fails.
    package func store(_ received: ReceivedBlob, as key: BlobKey) async throws {
        do {
            guard try await place(received, as: key) else { throw StorageError(.failed, "\(key.kind.rawValue)/\(key.id) exists already") }
        } catch {
            await discard(received)
            throw error
        }
    }

    package func remove(_ key: BlobKey) async {
        await remove([key])
    }
}
