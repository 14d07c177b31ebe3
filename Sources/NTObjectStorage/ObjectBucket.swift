import NTMetrics
import NTThreadPools

/// A bucket (below its prefix), reached through transfers: `run` performs calls on the
/// transfer pool, a thread of which blocks in libcurl for them (no event loop and no handler
/// thread ever waits on the store), each keeping its own connection; `transfer()` gives a
/// caller that may block (a job on the file pool) a connection of its own.
public final class ObjectBucket: Sendable {
    public let settings: BucketSettings
    private let transfers: ThreadPool
    /// Each transfer thread's connection.
    private let handles: PerThread<BucketTransfer>
    private let timeouts: TransferTimeouts
    /// Every call on the bucket, by operation and outcome (/metrics).
    public let metrics: OperationMetrics

    public init(settings: BucketSettings, transfers: ThreadPool, timeouts: TransferTimeouts) {
        self.settings = settings
        self.transfers = transfers
        self.timeouts = timeouts
        handles = PerThread(threads: transfers.threadCount)
        metrics = OperationMetrics(name: "toursd_bucket_requests", what: "requests to the bucket")
    }

    /// Lets the transfer threads go once their calls are done.
    public func stop() { transfers.stop() }

    /// The store's smallest part but the last (S3's rule, which moto enforces).
    public static let minimumPartSize: Int64 = 5 << 20

    /// Runs `calls` on a transfer thread with that thread's connection.
    @discardableResult
    public func run<T: Sendable>(_ calls: @escaping @Sendable (BucketTransfer) throws -> T) async throws -> T {
        try await transfers.run { [handles, settings, timeouts, metrics] (thread: Int) throws -> T in
            try calls(try handles.value(thread) { () throws(ObjectStoreError) in try BucketTransfer.open(settings, timeouts: timeouts, metrics: metrics) })
        }
    }

    /// A connection for the caller's own thread (one thread at a time).
    public func transfer() throws -> BucketTransfer {
        try BucketTransfer.open(settings, timeouts: timeouts, metrics: metrics)
    }
}

/// The calls on a bucket, made on one connection by the thread that holds it; each blocks
/// until the store answers.
public final class BucketTransfer {
    private let transfer: S3Transfer
    public let settings: BucketSettings
    private let metrics: OperationMetrics?

    init(_ transfer: S3Transfer, _ settings: BucketSettings, metrics: OperationMetrics?) {
        self.transfer = transfer
        self.settings = settings
        self.metrics = metrics
    }

    /// A connection to the bucket of `settings` for the caller's own thread (a tool, a test);
    /// its calls are counted in `metrics` when given.
    public static func open(_ settings: BucketSettings, timeouts: TransferTimeouts, metrics: OperationMetrics? = nil) throws(ObjectStoreError) -> BucketTransfer {
        guard let transfer = S3Transfer(settings: settings, timeouts: timeouts) else { throw .unavailable("libcurl could not start") }
        return BucketTransfer(transfer, settings, metrics: metrics)
    }

    // MARK: Objects

    /// Puts an object whole; its ETag. `ifAbsent`: only where no object is (`If-None-Match:
    /// *`; a store that ignores the header, as rclone does, replaces: callers must not rely on
    /// it alone).
    @discardableResult
    public func put(_ key: String, _ payload: ObjectPayload, contentType: String, ifAbsent: Bool = false) throws(ObjectStoreError) -> String {
        var headers = [(name: "Content-Type", value: contentType)]
        if ifAbsent { headers.append(("If-None-Match", "*")) }
        return try perform(S3Request(method: "PUT", url: settings.url(key: key), headers: headers, payload: payload, operation: .put, what: "PUT \(key)")).headers["etag"] ?? ""
    }

    /// An object's size and date, or nil when there is none.
    public func head(_ key: String) throws(ObjectStoreError) -> ObjectSummary? {
        do {
            let answer = try perform(S3Request(method: "HEAD", url: settings.url(key: key), operation: .head, what: "HEAD \(key)"))
            return ObjectSummary(key: key, size: answer.headers["content-length"].flatMap { Int64($0) } ?? 0,
                                 lastModified: answer.headers["last-modified"].flatMap(HTTPDates.seconds) ?? 0)
        } catch {
            if case .notFound = error { return nil }
            throw error
        }
    }

    /// An object's bytes (`range`: only those), whole in memory: for small objects.
    public func get(_ key: String, range: Range<Int64>? = nil) throws(ObjectStoreError) -> [UInt8] {
        try perform(getRequest(key, range: range)).body
    }

    /// Passes an object's bytes (`range`: only those) to `sink` as they arrive; `sink` answers
    /// false to stop. A store that answers a ranged GET with 200 and the slice (rclone) or with
    /// 206 is the same here; one that sends another length is refused.
    public func get(_ key: String, range: Range<Int64>?, into sink: (UnsafeRawBufferPointer) -> Bool) throws(ObjectStoreError) {
        let request = getRequest(key, range: range)
        let outcome = withoutActuallyEscaping(sink) { sink in Result { () throws(ObjectStoreError) in try answered(request) { () throws(ObjectStoreError) in try transfer.perform(request, sink: sink) } } }
        let answer = try outcome.get()
        if let range, let length = answer.headers["content-length"].flatMap({ Int64($0) }), length != range.upperBound - range.lowerBound {
            throw .refused(status: answer.status, code: "", message: "GET \(key): the store sent \(length) bytes for a range of \(range.upperBound - range.lowerBound)")
        }
    }

    public func delete(_ key: String) throws(ObjectStoreError) {
        do {
            _ = try perform(S3Request(method: "DELETE", url: settings.url(key: key), operation: .delete, what: "DELETE \(key)"))
        } catch {
            guard case .notFound = error else { throw error } // else gone already
        }
    }

    /// Every object below `prefix` (below the bucket's), in key order, page by page, after the
    /// key `startAfter` when given; `limit` bounds how many.
    public func list(_ prefix: String, startAfter: String? = nil, limit: Int = .max) throws(ObjectStoreError) -> [ObjectSummary] {
        var found: [ObjectSummary] = []
        var token: String?
        repeat {
            var query = [(name: "list-type", value: "2"), (name: "max-keys", value: "\(min(1000, max(1, limit - found.count)))"), (name: "prefix", value: settings.prefix + prefix)]
            if let token { query.insert(("continuation-token", token), at: 0) }
            if let startAfter { query.append(("start-after", settings.prefix + startAfter)) }
            let answer = try perform(S3Request(method: "GET", url: settings.bucketURL(query: query), operation: .list, what: "LIST \(prefix)"))
            let page = S3Answers.objects(answer.body, below: settings.prefix)
            found += page.entries
            token = page.entries.isEmpty ? nil : page.next
        } while token != nil && found.count < limit
        return Array(found.prefix(limit))
    }

    // MARK: Multipart uploads

    public func startMultipart(_ key: String, contentType: String) throws(ObjectStoreError) -> String {
        let request = S3Request(method: "POST", url: settings.url(key: key, query: [("uploads", "")]),
                                headers: [("Content-Type", contentType)], operation: .startMultipart, what: "start multipart \(key)")
        guard let id = S3Answers.uploadId(try perform(request).body) else {
            throw ObjectStoreError.refused(status: 200, code: "", message: "start multipart \(key): no UploadId in the answer")
        }
        return id
    }

    /// Uploads part `number` (1…10000); returns its ETag.
    public func putPart(_ key: String, uploadId: String, number: Int, _ payload: ObjectPayload) throws(ObjectStoreError) -> String {
        let request = S3Request(method: "PUT", url: settings.url(key: key, query: [("partNumber", "\(number)"), ("uploadId", uploadId)]),
                                payload: payload, operation: .putPart, what: "PUT \(key) part \(number)")
        guard let etag = try perform(request).headers["etag"] else {
            throw ObjectStoreError.refused(status: 200, code: "", message: "PUT \(key) part \(number): no ETag in the answer")
        }
        return etag
    }

    /// Makes the parts one object. S3 may answer 200 and still fail (an `<Error>` in the body).
    public func completeMultipart(_ key: String, uploadId: String, parts: [UploadedPart]) throws(ObjectStoreError) {
        let request = S3Request(method: "POST", url: settings.url(key: key, query: [("uploadId", uploadId)]),
                                headers: [("Content-Type", "application/xml")], payload: .bytes(S3Answers.completion(parts)),
                                operation: .completeMultipart, what: "complete \(key)")
        let answer = try perform(request)
        if S3Answers.error(answer.body) != nil { throw ObjectStoreError.answer(500, answer.body, what: request.what) }
    }

    public func abortMultipart(_ key: String, uploadId: String) throws(ObjectStoreError) {
        do {
            _ = try perform(S3Request(method: "DELETE", url: settings.url(key: key, query: [("uploadId", uploadId)]), operation: .abortMultipart, what: "abort \(key)"))
        } catch {
            guard case .notFound = error else { throw error } // else completed or aborted already
        }
    }

    /// The multipart uploads in progress below `prefix`; `limit` bounds how many.
    public func multipartUploads(_ prefix: String, limit: Int = .max) throws(ObjectStoreError) -> [MultipartUpload] {
        var found: [MultipartUpload] = []
        var next: String?
        repeat {
            let markers = next?.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) ?? []
            var query: [(name: String, value: String)] = []
            if let key = markers.first { query.append(("key-marker", key)) }
            query.append(("prefix", settings.prefix + prefix))
            if markers.count == 2, !markers[1].isEmpty { query.append(("upload-id-marker", markers[1])) }
            query.append(("uploads", ""))
            let answer: S3Answer
            do {
                answer = try perform(S3Request(method: "GET", url: settings.bucketURL(query: query), operation: .listMultipart, what: "list multipart uploads"))
            } catch {
                // rclone answers NoSuchUpload when a bucket has none in progress.
                guard case .notFound = error else { throw error }
                break
            }
            let page = S3Answers.uploads(answer.body, below: settings.prefix)
            found += page.entries
            next = page.entries.isEmpty ? nil : page.next
        } while next != nil && found.count < limit
        return Array(found.prefix(limit))
    }

    /// Creates the bucket (a new bucket to copy into; the tests' buckets). One that exists
    /// and is ours already is no error.
    public func create() throws(ObjectStoreError) {
        do {
            _ = try perform(S3Request(method: "PUT", url: settings.bucketURL(), operation: .createBucket, what: "create bucket \(settings.bucket)"))
        } catch {
            // rclone says BucketAlreadyExists for its own too: a bucket we can list is ours.
            guard case .refused(409, let code, _) = error, code.hasPrefix("BucketAlready") else { throw error }
            _ = try list("", limit: 1)
        }
    }

    // MARK: Transport

    private func getRequest(_ key: String, range: Range<Int64>?) -> S3Request {
        var headers: [(name: String, value: String)] = []
        if let range { headers.append(("Range", "bytes=\(range.lowerBound)-\(range.upperBound - 1)")) }
        return S3Request(method: "GET", url: settings.url(key: key), headers: headers, operation: .get, what: "GET \(key)")
    }

    private func perform(_ request: S3Request) throws(ObjectStoreError) -> S3Answer {
        try answered(request) { () throws(ObjectStoreError) in try transfer.perform(request) }
    }

    /// What `call` got, checked, and counted by operation and outcome.
    private func answered(_ request: S3Request, _ call: () throws(ObjectStoreError) -> S3Answer) throws(ObjectStoreError) -> S3Answer {
        let start = ContinuousClock.now
        do {
            let answer = try call()
            try Self.check(answer, request)
            metrics?.record(request.operation.rawValue, outcome: "ok", seconds: OperationMetrics.seconds(since: start))
            return answer
        } catch {
            metrics?.record(request.operation.rawValue, outcome: error.outcome, seconds: OperationMetrics.seconds(since: start))
            throw error
        }
    }

    private static func check(_ answer: S3Answer, _ request: S3Request) throws(ObjectStoreError) {
        guard (200...299).contains(answer.status) else { throw ObjectStoreError.answer(answer.status, answer.body, what: request.what) }
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

extension BucketTransfer {
    /// Tries what toursd does with the bucket, with these settings: a small object put under the
    /// prefix (`.toursd-probe/…`) and deleted. Throws the store's answer when it refuses.
    public func probe() throws(ObjectStoreError) {
        let key = ".toursd-probe/\(UInt64.random(in: 0...UInt64.max))"
        try put(key, .bytes(Array("toursd check-config".utf8)), contentType: "text/plain")
        try delete(key)
    }
}
