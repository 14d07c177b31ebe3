#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ImagePreviews
import Logging
import ThreadPools

/// Previews of panoramas, made once and kept on disk: `previews/<tenant>/<panoramaId>/
/// <width>-<digest prefix>.jpg` under the data directory. The digest in the name means a
/// panorama id stored again with other bytes never gets an old preview; a panorama's directory
/// goes when the panorama does. A cache: written to a temporary name, fsynced and renamed, so
/// a crash leaves a whole preview or none, and a lost one is made again.
final class PreviewCache: Sendable {
    let root: String
    let io: ThreadPool
    let quality: Int
    let maxSourcePixels: Int
    let logger: Logger

    init(dataDir: String, io: ThreadPool, quality: Int, maxSourcePixels: Int, logger: Logger) {
        root = dataDir + "/previews"
        self.io = io
        self.logger = logger
        self.quality = quality
        self.maxSourcePixels = maxSourcePixels
    }

    private func directory(tenant: Int64, id: String) -> String { "\(root)/\(tenant)/\(id)" }

    func path(tenant: Int64, _ panorama: PanoramaRecord, width: Int) -> String {
        "\(directory(tenant: tenant, id: panorama.id))/\(width)-\(panorama.sha256.prefix(16)).jpg"
    }

    /// What a preview request is answered with: the cached file, or the preview just made
    /// (sent from memory while its file is written to the cache behind the answer).
    enum Preview {
        case file(fd: Int32, size: Int64)
        case made([UInt8])
    }

    /// The preview of a stored panorama at `width`, made first from `source` when not
    /// cached. Runs on the I/O pool.
    func preview(tenant: Int64, _ panorama: PanoramaRecord, width: Int, source: String) async throws -> Preview {
        let target = path(tenant: tenant, panorama, width: width)
        let preview = try await io.run { [self] () throws -> Preview in
            if let opened = Self.openFile(target) { return .file(fd: opened.fd, size: opened.size) }
            return .made(try makePreview(panorama, width: width, source: source))
        }
        if case .made(let bytes) = preview {
            let written = io.submit { [self] _ in
                do {
                    try write(bytes, to: target, tenant: tenant, id: panorama.id)
                } catch {
                    logger.warn("a preview cannot be cached", ["panorama": panorama.id, "error": "\(error)"])
                }
            }
            if !written { logger.warn("a preview is not cached: the file pool has stopped", ["panorama": panorama.id]) }
        }
        return preview
    }

    /// A JPEG panorama's preview; any other image, or a JPEG that cannot be read, gets the
    /// placeholder (panoramas are 2:1).
    func makePreview(_ panorama: PanoramaRecord, width: Int, source: String) throws -> [UInt8] {
        if panorama.contentType == "image/jpeg" {
            do {
                return try MappedFile.read(source) { bytes in
                    try JPEGPreview.make(from: bytes, width: width, quality: quality, maxSourcePixels: maxSourcePixels)
                }
            } catch let error as PreviewError {
                logger.warn("a panorama's preview cannot be made: the placeholder stands in", ["panorama": panorama.id, "error": error.message])
            }
        }
        do {
            return try JPEGPreview.placeholder(width: width, height: width / 2, quality: quality)
        } catch {
            throw ServiceError(.internal, "the placeholder cannot be made: \(error)")
        }
    }

    private func write(_ bytes: [UInt8], to target: String, tenant: Int64, id: String) throws {
        // Private like every file of the data directory: 0700 folders, 0600 files.
        for directory in [root, "\(root)/\(tenant)", directory(tenant: tenant, id: id)] where mkdir(directory, 0o700) != 0 && errno != EEXIST {
            throw ServiceError(.internal, "\(directory) cannot be made: \(String(cString: strerror(errno)))")
        }
        let temporary = "\(target).\(UInt64.random(in: .min ... .max)).tmp"
        let fd = Glibc.open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw ServiceError(.internal, "a preview cannot be written: \(String(cString: strerror(errno)))") }
        var written = 0
        let ok = bytes.withUnsafeBytes { raw -> Bool in
            while written < raw.count {
                let count = Glibc.write(fd, raw.baseAddress! + written, raw.count - written)
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return false }
                written += count
            }
            return fsync(fd) == 0
        }
        close(fd)
        guard ok, rename(temporary, target) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw ServiceError(.internal, "a preview cannot be written: \(reason)")
        }
    }

    private static func openFile(_ path: String) -> (fd: Int32, size: Int64)? {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            close(fd)
            return nil
        }
        return (fd, Int64(info.st_size))
    }

    /// Removes the previews of panoramas that are gone.
    func remove(tenant: Int64, ids: [String]) async {
        _ = try? await io.run { [self] in
            for id in ids { try? FileManager.default.removeItem(atPath: directory(tenant: tenant, id: id)) }
        }
    }
}

/// A file mapped read-only for the length of one call: a panorama of hundreds of MB is read
/// by the page cache, never copied into the heap.
enum MappedFile {
    static func read<T>(_ path: String, _ body: (UnsafeRawBufferPointer) throws -> T) throws -> T {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ServiceError(.internal, "\(path) cannot be opened: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw ServiceError(.internal, "\(path) cannot be read: \(String(cString: strerror(errno)))") }
        let size = Int(info.st_size)
        guard size > 0 else { return try body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        guard let address = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0), address != MAP_FAILED else {
            throw ServiceError(.internal, "\(path) cannot be mapped: \(String(cString: strerror(errno)))")
        }
        defer { munmap(address, size) }
        return try body(UnsafeRawBufferPointer(start: address, count: size))
    }
}
