import NTAPIModel
import Foundation
import NTHashing

/// The server the queue talks to: its base URL and the credential it is sent.
struct ServerEndpoint: Sendable {
    let base: String
    let credentials: Credentials

    init(server: URL, token: String, provider: CredentialProvider? = nil) {
        var base = server.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        self.base = base
        credentials = Credentials(token: token, provider: provider)
    }

    /// A path of the API.
    func url(_ path: String) -> String {
        base + path
    }

    /// A URL the server named (a tus `Location`, a tour document's world map), when it is
    /// this server's: a path, or an absolute URL under the base. Anything else is refused, so
    /// that the token is never sent to another host.
    func ownURL(_ named: String) -> String? {
        if named.hasPrefix("/"), !named.hasPrefix("//") { return base + named }
        return named.hasPrefix(base + "/") ? named : nil
    }

    var authorization: (name: String, value: String) { ("Authorization", "Bearer \(credentials.token)") }
}

/// A stored panorama as its upload needs it.
struct PanoramaFile: Sendable, Equatable {
    let id: String
    let floorId: String
    let roomId: String?
    let position: PanoramaPosition?
    let path: String
    let contentType: String
    let size: Int64
    /// Lowercase hex.
    let sha256: String
}

/// The HTTP request each kind of queue item becomes (docs/api.md): pure functions of the local
/// rows, so tests check them without a server. Every write is idempotent on the server
/// (client ids, planId, digests), so a retry never makes a duplicate.
enum ItemRequests {
    static let tusVersion = ("Tus-Resumable", "1.0.0")

    static func property(_ server: ServerEndpoint, id: String, _ input: PropertyInput) -> HTTPRequest {
        json("PUT", server, "/v1/properties/\(id)", input)
    }

    static func floor(_ server: ServerEndpoint, propertyId: String, floorId: String, _ input: FloorInput) -> HTTPRequest {
        json("PUT", server, "/v1/properties/\(propertyId)/floors/\(floorId)", input, sink: .discard)
    }

    /// The plan's body was made when it was captured (its planId with it).
    static func plan(_ server: ServerEndpoint, floorId: String, body: String) -> HTTPRequest {
        HTTPRequest("PUT", server.url("/v1/floors/\(floorId)/plan"),
                    headers: [server.authorization, ("Content-Type", "application/json")], body: .bytes(Array(body.utf8)), sink: .discard)
    }

    static func worldMap(_ server: ServerEndpoint, floorId: String, path: String, size: Int64) -> HTTPRequest {
        HTTPRequest("PUT", server.url("/v1/floors/\(floorId)/worldmap"),
                    headers: [server.authorization, ("Content-Type", "application/octet-stream")],
                    body: .file(path: path, offset: 0, length: size), sink: .discard)
    }

    /// One-shot upload, its digest declared (RFC 9530) so the server checks the bytes.
    static func panorama(_ server: ServerEndpoint, _ file: PanoramaFile) -> HTTPRequest {
        var path = "/v1/panoramas/\(file.id)?floorId=\(file.floorId)"
        if let room = file.roomId { path += "&roomId=\(room)" }
        for (name, value) in file.position?.parameters ?? [] { path += "&\(name)=\(value)" }
        return HTTPRequest("PUT", server.url(path),
                           headers: [server.authorization, ("Content-Type", file.contentType), ("Repr-Digest", reprDigest(file.sha256))],
                           body: .file(path: file.path, offset: 0, length: file.size), sink: .discard)
    }

    static func deleteProperty(_ server: ServerEndpoint, id: String) -> HTTPRequest {
        HTTPRequest("DELETE", server.url("/v1/properties/\(id)"), headers: [server.authorization])
    }

    /// tus creation, without a body: idempotent per panorama, it answers the upload that
    /// already exists (and its offset) after an interruption.
    static func resumableCreation(_ server: ServerEndpoint, _ file: PanoramaFile) -> HTTPRequest {
        var metadata = [("panoramaId", file.id), ("floorId", file.floorId), ("contentType", file.contentType), ("sha256", file.sha256)]
        if let room = file.roomId { metadata.append(("roomId", room)) }
        metadata += file.position?.parameters.map { ($0.name, $0.value) } ?? []
        let encoded = metadata.map { "\($0.0) \(ByteEncoding.base64(Array($0.1.utf8)))" }.joined(separator: ",")
        return HTTPRequest("POST", server.url("/v1/uploads"),
                           headers: [server.authorization, tusVersion, ("Upload-Length", String(file.size)), ("Upload-Metadata", encoded)],
                           body: .bytes([]))
    }

    /// The rest of the file, from the server's offset, to `location` (a URL `ownURL` gave). No per-PATCH checksum: the server then
    /// keeps what arrived before an interruption, and the declared sha256 checks the whole.
    static func resumablePatch(_ server: ServerEndpoint, location: String, offset: Int64, _ file: PanoramaFile) -> HTTPRequest {
        HTTPRequest("PATCH", location,
                    headers: [server.authorization, tusVersion, ("Upload-Offset", String(offset)),
                              ("Content-Type", "application/offset+octet-stream")],
                    body: .file(path: file.path, offset: offset, length: file.size - offset))
    }

    /// `sha-256=:BASE64:` from the hex digest.
    static func reprDigest(_ hex: String) -> String {
        "sha-256=:\(ByteEncoding.base64(ByteEncoding.bytes(fromHex: hex) ?? [])):"
    }

    private static func json(_ method: String, _ server: ServerEndpoint, _ path: String, _ body: some JSONDocument,
                             sink: HTTPRequest.Sink = .memory(limit: TransferLimits.maxResponseBytes)) -> HTTPRequest {
        HTTPRequest(method, server.url(path), headers: [server.authorization, ("Content-Type", "application/json")], body: .bytes(body.jsonBytes), sink: sink)
    }
}
