import NTAPIModel
import Foundation
import Synchronization

/// Reads from the server outside the upload queue (listing, downloading), on a transport of
/// its own made at the first read: a download never waits behind the queue's uploads.
final class RemoteServer: Sendable {
    private let server: ServerEndpoint
    private let options: SyncOptions
    private let transport = Mutex<CurlMulti?>(nil)

    init(server: ServerEndpoint, options: SyncOptions) {
        self.server = server
        self.options = options
    }

    deinit {
        transport.withLock { $0?.shutdown() }
    }

    /// GET of one of the API's documents, up to `maxDownloadBytes` (a page of 200 properties
    /// with their metadata can pass a few MB); `notFound` for a 404, the server's error for
    /// other answers.
    func document<T>(_ path: String, _ read: (JSONValue) throws(InvalidDocument) -> T) async throws(NoughtyToursError) -> T {
        try await get(path, sink: .memory(limit: Int(options.maxDownloadBytes))).document(read)
    }

    /// GET of a URL a document named into a file (written and fsynced as it arrives); one
    /// that is not this server's is refused (the token goes nowhere else).
    func download(_ named: String, to file: String) async throws(NoughtyToursError) {
        guard let url = server.ownURL(named) else { throw .transport("the server named \"\(named.prefix(200))\", which is not its own, to download") }
        _ = try await get(url: url, sink: .file(path: file, limit: options.maxDownloadBytes))
    }

    /// A JSON body sent with `method` (POST, PUT) to a path of the API; its answer read as one
    /// of the API's documents.
    func submit<T>(_ method: String, _ path: String, json body: [UInt8], _ read: (JSONValue) throws(InvalidDocument) -> T) async throws(NoughtyToursError) -> T {
        let request = HTTPRequest(method, server.url(path), headers: [server.authorization, ("Content-Type", "application/json")], body: .bytes(body),
                                  sink: .memory(limit: Int(options.maxDownloadBytes)))
        return try await send(request).document(read)
    }

    private func get(_ path: String, sink: HTTPRequest.Sink) async throws(NoughtyToursError) -> HTTPResponse {
        try await get(url: server.url(path), sink: sink)
    }

    private func get(url: String, sink: HTTPRequest.Sink) async throws(NoughtyToursError) -> HTTPResponse {
        try await send(HTTPRequest("GET", url, headers: [server.authorization], sink: sink))
    }

    private func send(_ request: HTTPRequest) async throws(NoughtyToursError) -> HTTPResponse {
        let transport = try self.transport.withLock { transport throws(NoughtyToursError) -> CurlMulti in
            if let transport { return transport }
            let made = try CurlMulti(connectionsPerHost: 2)
            transport = made
            return made
        }
        let response = try await transport.perform(request, server.credentials, limits: options.limits).get()
        if response.status == 404 { throw .notFound }
        guard response.isSuccess else { throw response.error }
        return response
    }
}
