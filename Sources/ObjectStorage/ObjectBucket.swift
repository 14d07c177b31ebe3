import ThreadPools

/// A bucket (below its prefix) and what toursd does with it: objects put, read, listed and
/// deleted; multipart uploads started, filled, listed, completed and aborted. Every request
/// runs on the transfer pool, a thread of which blocks in libcurl for it: no event loop and
/// no handler thread ever waits on the store. Each transfer thread keeps its own connection.
public final class ObjectBucket: Sendable {
    public let settings: BucketSettings
    private let transfers: ThreadPool
    private let handles: TransferHandles

    public init(settings: BucketSettings, transfers: ThreadPool, timeouts: TransferTimeouts) {
        self.settings = settings
        self.transfers = transfers
        handles = TransferHandles(count: transfers.threadCount, settings: settings, timeouts: timeouts)
    }

    /// The store's smallest part but the last (S3's rule, which moto enforces).
    public static let minimumPartSize: Int64 = 5 << 20

    // MARK: Objects

    /// Puts an object whole. `ifAbsent`: only where no object is (`If-None-Match: *`; a store
    /// that ignores the header, as rclone does, replaces: callers must not rely on it alone).
    @discardableResult
    public func put(_ key: String, _ payload: ObjectPayload, contentType: String, ifAbsent: Bool = false) async throws -> String {
        var headers = [(name: "Content-Type", value: contentType)]
        if ifAbsent { headers.append(("If-None-Match", "*")) }
        let answer = try await perform(S3Request(method: "PUT", url: settings.url(key: key), headers: headers, payload: payload, what: "PUT \(key)"))
        return answer.headers["etag"] ?? ""
    }

    /// An object's size and date, or nil when there is none.
    public func head(_ key: String) async throws -> ObjectSummary? {
        do {
            let answer = try await perform(S3Request(method: "HEAD", url: settings.url(key: key), what: "HEAD \(key)"))
            return ObjectSummary(key: key, size: answer.headers["content-length"].flatMap { Int64($0) } ?? 0,
                                 lastModified: answer.headers["last-modified"].flatMap(HTTPDates.seconds) ?? 0)
        } catch ObjectStoreError.notFound {
            return nil
        }
    }

    /// An object's bytes (`range`: only those), whole in memory: for small objects.
    public func get(_ key: String, range: Range<Int64>? = nil) async throws -> [UInt8] {
        try await perform(getRequest(key, range: range)).body
    }

    /// Streams an object's bytes (`range`: only those) to `sink`, on the transfer thread, as
    /// they arrive; `sink` answers false to stop. A store that answers a ranged GET with 200
    /// and the slice (rclone) or with 206 is the same here; one that sends the whole object
    /// for a range is refused.
    public func get(_ key: String, range: Range<Int64>?, into sink: @escaping @Sendable (UnsafeRawBufferPointer) -> Bool) async throws {
        let request = getRequest(key, range: range)
        let expected = range.map { $0.upperBound - $0.lowerBound }
        let answer = try await transfers.run { [handles] (thread: Int) throws -> S3Answer in
            try handles.transfer(thread).perform(request, sink: sink)
        }
        try Self.check(answer, request)
        if let expected, answer.headers["content-length"].flatMap({ Int64($0) }) ?? expected != expected {
            throw ObjectStoreError.refused(status: answer.status, code: "", message: "GET \(key): the store sent \(answer.headers["content-length"] ?? "?") bytes for a range of \(expected)")
        }
    }

    public func delete(_ key: String) async throws {
        do {
            _ = try await perform(S3Request(method: "DELETE", url: settings.url(key: key), what: "DELETE \(key)"))
        } catch ObjectStoreError.notFound {
            // Gone already.
        }
    }

    /// Every object below `prefix` (below the bucket's), page by page; `limit` bounds how many.
    public func list(_ prefix: String, limit: Int = .max) async throws -> [ObjectSummary] {
        var found: [ObjectSummary] = []
        var token: String?
        repeat {
            var query = [(name: "list-type", value: "2"), (name: "max-keys", value: "1000"), (name: "prefix", value: settings.prefix + prefix)]
            if let token { query.insert(("continuation-token", token), at: 0) }
            let answer = try await perform(S3Request(method: "GET", url: settings.bucketURL(query: query), what: "LIST \(prefix)"))
            let page = S3Answers.objects(answer.body, below: settings.prefix)
            found += page.entries
            token = page.next
        } while token != nil && found.count < limit
        return Array(found.prefix(limit))
    }

    // MARK: Multipart uploads

    public func startMultipart(_ key: String, contentType: String) async throws -> String {
        let request = S3Request(method: "POST", url: settings.url(key: key, query: [("uploads", "")]),
                                headers: [("Content-Type", contentType)], what: "start multipart \(key)")
        guard let id = S3Answers.uploadId(try await perform(request).body) else {
            throw ObjectStoreError.refused(status: 200, code: "", message: "start multipart \(key): no UploadId in the answer")
        }
        return id
    }

    /// Uploads part `number` (1…10000); returns its ETag.
    public func putPart(_ key: String, uploadId: String, number: Int, _ payload: ObjectPayload) async throws -> String {
        let request = S3Request(method: "PUT", url: settings.url(key: key, query: [("partNumber", "\(number)"), ("uploadId", uploadId)]),
                                payload: payload, what: "PUT \(key) part \(number)")
        guard let etag = try await perform(request).headers["etag"] else {
            throw ObjectStoreError.refused(status: 200, code: "", message: "PUT \(key) part \(number): no ETag in the answer")
        }
        return etag
    }

    /// The parts uploaded so far, in order.
    public func parts(_ key: String, uploadId: String) async throws -> [UploadedPart] {
        var found: [UploadedPart] = []
        var marker: String?
        repeat {
            var query = [(name: "max-parts", value: "1000")]
            if let marker { query.append(("part-number-marker", marker)) }
            query.append(("uploadId", uploadId))
            let answer = try await perform(S3Request(method: "GET", url: settings.url(key: key, query: query), what: "list parts of \(key)"))
            let page = S3Answers.parts(answer.body)
            found += page.entries
            marker = page.entries.isEmpty ? nil : page.next
        } while marker != nil && found.count < 10_000
        return found.sorted { $0.number < $1.number }
    }

    /// Makes the parts one object. S3 may answer 200 and still fail (an `<Error>` in the body).
    public func completeMultipart(_ key: String, uploadId: String, parts: [UploadedPart]) async throws {
        let request = S3Request(method: "POST", url: settings.url(key: key, query: [("uploadId", uploadId)]),
                                headers: [("Content-Type", "application/xml")], payload: .bytes(S3Answers.completion(parts)),
                                what: "complete \(key)")
        let answer = try await perform(request)
        if S3Answers.error(answer.body) != nil { throw ObjectStoreError.answer(500, answer.body, what: request.what) }
    }

    public func abortMultipart(_ key: String, uploadId: String) async throws {
        do {
            _ = try await perform(S3Request(method: "DELETE", url: settings.url(key: key, query: [("uploadId", uploadId)]), what: "abort \(key)"))
        } catch ObjectStoreError.notFound {
            // Completed or aborted already.
        }
    }

    /// The multipart uploads in progress below `prefix`; `limit` bounds how many.
    public func multipartUploads(_ prefix: String, limit: Int = .max) async throws -> [MultipartUpload] {
        var found: [MultipartUpload] = []
        var next: String?
        repeat {
            var query: [(name: String, value: String)] = []
            if let markers = next?.split(separator: "\n", omittingEmptySubsequences: false) {
                query.append(("key-marker", String(markers[0])))
            }
            query += [("prefix", settings.prefix + prefix)]
            if let markers = next?.split(separator: "\n", omittingEmptySubsequences: false), markers.count == 2, !markers[1].isEmpty {
                query.append(("upload-id-marker", String(markers[1])))
            }
            query.append(("uploads", ""))
            let answer = try await perform(S3Request(method: "GET", url: settings.bucketURL(query: query), what: "list multipart uploads"))
            let page = S3Answers.uploads(answer.body, below: settings.prefix)
            found += page.entries
            next = page.entries.isEmpty ? nil : page.next
        } while next != nil && found.count < limit
        return Array(found.prefix(limit))
    }

    /// Creates the bucket (a new bucket to copy into; the tests' buckets). One that exists
    /// and is ours already is no error.
    public func create() async throws {
        do {
            _ = try await perform(S3Request(method: "PUT", url: settings.bucketURL(), what: "create bucket \(settings.bucket)"))
        } catch ObjectStoreError.refused(409, "BucketAlreadyOwnedByYou", _) {
        }
    }

    // MARK: Transport

    private func getRequest(_ key: String, range: Range<Int64>?) -> S3Request {
        var headers: [(name: String, value: String)] = []
        if let range { headers.append(("Range", "bytes=\(range.lowerBound)-\(range.upperBound - 1)")) }
        return S3Request(method: "GET", url: settings.url(key: key), headers: headers, what: "GET \(key)")
    }

    private func perform(_ request: S3Request) async throws -> S3Answer {
        let answer = try await transfers.run { [handles] (thread: Int) throws -> S3Answer in
            try handles.transfer(thread).perform(request)
        }
        try Self.check(answer, request)
        return answer
    }

    private static func check(_ answer: S3Answer, _ request: S3Request) throws(ObjectStoreError) {
        guard (200...299).contains(answer.status) else { throw ObjectStoreError.answer(answer.status, answer.body, what: request.what) }
    }
}

/// One transfer (a libcurl handle) per transfer thread, made on first use by that thread and
/// touched by it alone.
private final class TransferHandles: @unchecked Sendable {
    private var transfers: [S3Transfer?]
    private let settings: BucketSettings
    private let timeouts: TransferTimeouts

    init(count: Int, settings: BucketSettings, timeouts: TransferTimeouts) {
        transfers = Array(repeating: nil, count: count)
        self.settings = settings
        self.timeouts = timeouts
    }

    func transfer(_ thread: Int) throws(ObjectStoreError) -> S3Transfer {
        if let transfer = transfers[thread] { return transfer }
        guard let transfer = S3Transfer(settings: settings, timeouts: timeouts) else { throw .unavailable("libcurl could not start") }
        transfers[thread] = transfer
        return transfer
    }
}

/// HTTP dates (`Last-Modified`, RFC 9110 §5.6.7's IMF-fixdate) as seconds since 1970.
enum HTTPDates {
    static func seconds(_ text: String) -> Int64? {
        // "Wed, 02 Dec 2026 10:00:00 GMT"
        let parts = text.split(separator: " ")
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        guard parts.count == 6, let day = Int(parts[1]), let month = months.firstIndex(of: String(parts[2])), let year = Int(parts[3]) else { return nil }
        func padded(_ value: Int, _ width: Int) -> String { String(repeating: "0", count: max(0, width - "\(value)".count)) + "\(value)" }
        return S3Answers.isoSeconds("\(padded(year, 4))-\(padded(month + 1, 2))-\(padded(day, 2))T\(parts[4])Z")
    }
}
