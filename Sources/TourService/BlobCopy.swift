#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Hashing
import ObjectStorage

/// `toursd blobs copy --to s3://BUCKET/PREFIX`: every blob the database names, from the blob
/// folder into a bucket, each checked by its digest three times: the file against its row
/// (a file that changed on disk is reported, not copied), the request (its SHA-256 signed: the
/// store refuses bytes that changed on the way), and the object read back from the bucket. One
/// already there with those bytes is left as it is, so a second run after the daemons stop
/// copies only what came meanwhile. An unfinished upload's acknowledged bytes become its
/// first segment (`BucketPartial`).
enum BlobCopy {
    struct Outcome: Equatable, Sendable {
        var copied = 0
        var present = 0
        var bytes: Int64 = 0
        /// What could not be copied, and why: nothing of it was taken as copied.
        var problems: [String] = []
    }

    /// The largest object one PUT may carry (S3's limit).
    static let maxObjectBytes: Int64 = 5 << 30

    static func run(_ entries: [BucketBackup.Entry], from folder: String, to bucket: BucketTransfer) -> Outcome {
        var outcome = Outcome()
        for entry in entries {
            do throws(CopyProblem) {
                if try copy(entry, from: folder, to: bucket) {
                    outcome.copied += 1
                    outcome.bytes += entry.size
                } else {
                    outcome.present += 1
                }
            } catch {
                outcome.problems.append("\(entry.name): \(error.description)")
            }
        }
        return outcome
    }

    struct CopyProblem: Error, CustomStringConvertible {
        let description: String
    }

    /// True when copied, false when the bucket had these bytes already.
    private static func copy(_ entry: BucketBackup.Entry, from folder: String, to bucket: BucketTransfer) throws(CopyProblem) -> Bool {
        let upload = entry.name.contains("/uploads/")
        let target = upload ? BucketPartial.segmentName(entry.name, start: 0) : entry.name
        let path = "\(folder)/\(entry.name)"
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw CopyProblem(description: "\(path) cannot be opened: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        guard entry.size <= maxObjectBytes else { throw CopyProblem(description: "\(entry.size) bytes: more than one PUT carries") }
        let local: String
        do {
            local = try FileDigest.sha256(fd, offset: 0, length: entry.size)
        } catch {
            throw CopyProblem(description: "\(path): \(error.message)")
        }
        if !entry.sha256.isEmpty, local != entry.sha256 {
            throw CopyProblem(description: "the file has sha-256 \(local), not the \(entry.sha256) its row records: not copied")
        }
        do {
            if let there = try bucket.head(target), there.size == entry.size, try digest(of: target, in: bucket) == local { return false }
            guard entry.size > 0 || !upload else { return true } // an upload with nothing acknowledged has no segment
            try bucket.put(target, .file(fd: fd, offset: 0, length: entry.size, sha256: local), contentType: "application/octet-stream")
            let copied = try digest(of: target, in: bucket)
            guard copied == local else { throw CopyProblem(description: "the bucket's copy reads back with sha-256 \(copied), not \(local)") }
            return true
        } catch let error as CopyProblem {
            throw error
        } catch {
            throw CopyProblem(description: "\(error)")
        }
    }

    /// An object's SHA-256, read back whole.
    private static func digest(of name: String, in bucket: BucketTransfer) throws -> String {
        let digest = StreamingDigest(.sha256)
        try bucket.get(name, range: nil) { bytes in
            digest.update(bytes)
            return true
        }
        return ByteEncoding.hex(digest.finish())
    }
}
