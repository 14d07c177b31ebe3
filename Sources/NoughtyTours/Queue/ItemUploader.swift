import NTAPIModel
import Foundation
import NTSQLiteDB

/// How one attempt at an item ended.
enum AttemptOutcome: Sendable, Equatable {
    /// On the server; a property's answer carries its tourId.
    case uploaded(tourId: String?)
    /// Nothing to send any more (its property was deleted, its world map replaced).
    case obsolete
    case failed(NoughtyToursError, retryAfter: Duration?)
}

/// Makes one attempt at one queue item: reads what it uploads from local storage, sends it,
/// and says how it went. Recording the outcome is the queue's job.
struct ItemUploader: Sendable {
    let store: LocalStore
    let transport: CurlMulti
    let server: ServerEndpoint
    let options: SyncOptions
    let events: SyncEvents

    /// What an item's attempt sends.
    enum Work {
        case request(HTTPRequest)
        case panorama(PanoramaFile)
        case obsolete
    }

    func attempt(_ item: QueueItem) async -> AttemptOutcome {
        let work: Work
        do {
            work = try await store.read { db in try Self.work(for: item, db, server) }
        } catch {
            return .failed(error, retryAfter: nil)
        }
        switch work {
        case .obsolete:
            return .obsolete
        case .request(let request):
            return await send(request, item, offset: 0, total: request.body.length)
        case .panorama(let file) where file.size >= options.resumableThreshold:
            return await resumable(file, item)
        case .panorama(let file):
            return await send(ItemRequests.panorama(server, file), item, offset: 0, total: file.size)
        }
    }

    /// A single request; a 2xx is success (and a 404 for a deletion: nothing to delete).
    private func send(_ request: HTTPRequest, _ item: QueueItem, offset: Int64, total: Int64) async -> AttemptOutcome {
        switch await perform(request, item, offset: offset, total: total) {
        case .success(let response) where response.isSuccess || (item.kind == .deleteProperty && response.status == 404):
            guard item.kind == .property else { return .uploaded(tourId: nil) }
            do {
                return .uploaded(tourId: try response.document(PropertyDocument.init).tourId)
            } catch {
                return .failed(error, retryAfter: nil)
            }
        case .success(let response):
            return .failed(response.error, retryAfter: response.retryAfter)
        case .failure(let error):
            return .failed(error, retryAfter: nil)
        }
    }

    /// tus: create (or find) the upload, then send the rest from the server's offset. An
    /// offset that moved meanwhile (a stale connection's bytes made durable late) is asked again.
    private func resumable(_ file: PanoramaFile, _ item: QueueItem) async -> AttemptOutcome {
        for _ in 0..<3 {
            let created: HTTPResponse
            switch await perform(ItemRequests.resumableCreation(server, file), item, offset: 0, total: 0) {
            case .success(let response): created = response
            case .failure(let error): return .failed(error, retryAfter: nil)
            }
            // 200: the panorama is stored already, with this digest.
            if created.status == 200 { return .uploaded(tourId: nil) }
            guard created.status == 201, let location = created.header("location").flatMap(server.ownURL),
                  let offset = created.header("upload-offset").flatMap(Int64.init), (0...file.size).contains(offset) else {
                return .failed(created.isSuccess ? .transport("the server's tus creation answer lacks Upload-Offset, or a Location of its own") : created.error,
                               retryAfter: created.retryAfter)
            }
            if offset > 0, events.isObserved { events.send(.resumed(item.uploadItem, offset: offset, total: file.size)) }
            let patched: HTTPResponse
            switch await perform(ItemRequests.resumablePatch(server, location: location, offset: offset, file), item, offset: offset, total: file.size) {
            case .success(let response): patched = response
            case .failure(let error): return .failed(error, retryAfter: nil)
            }
            if patched.isSuccess { return .uploaded(tourId: nil) }
            // Any 409 to a PATCH says the offset is not the server's (tus: "If the offsets do not
            // match, the Server MUST respond with the 409 Conflict status"), even when its body
            // was lost on the way (found by make soak: a truncated 409 failed the item for good).
            guard patched.status == 409 else { return .failed(patched.error, retryAfter: patched.retryAfter) }
        }
        return .failed(.transport("the upload's offset kept moving"), retryAfter: nil)
    }

    private func perform(_ request: HTTPRequest, _ item: QueueItem, offset: Int64, total: Int64) async -> Result<HTTPResponse, NoughtyToursError> {
        let events = self.events
        let named = item.uploadItem
        var progress: ProgressHandler?
        if total > 0, events.isObserved {
            progress = { sent, _ in events.send(.progress(named, sent: offset + sent, total: total)) }
        }
        return await transport.perform(request, server.credentials, limits: options.limits, progress: progress)
    }

    /// Reads what the item uploads; `.obsolete` when it is gone from local storage.
    static func work(for item: QueueItem, _ db: Database, _ server: ServerEndpoint) throws -> Work {
        switch item.kind {
        case .property:
            guard let row = try db.first("SELECT name, floor_count, metadata FROM properties WHERE id = ?", item.entityId) else { return .obsolete }
            let input = PropertyInput(name: try row.decode(0, as: String.self), floorCount: try row.decodeIfPresent(1, as: Int.self) ?? 1,
                                      metadata: ((try? JSONReader.parse(try row.decode(2, as: String.self))) ?? .null).stringMap)
            return .request(ItemRequests.property(server, id: item.entityId, input))
        case .floor:
            guard let row = try db.first("SELECT property_id, number, name FROM floors WHERE id = ?", item.entityId) else { return .obsolete }
            return .request(ItemRequests.floor(server, propertyId: try row.decode(0, as: String.self), floorId: item.entityId,
                                               FloorInput(number: try row.decode(1, as: Int.self), name: try row.decodeIfPresent(2, as: String.self))))
        case .plan:
            guard try db.first("SELECT 1 FROM floors WHERE id = ?", item.entityId) != nil, let body = item.payload else { return .obsolete }
            return .request(ItemRequests.plan(server, floorId: item.entityId, body: body))
        case .worldmap:
            // A newer plan replaced this map (its file is gone): nothing to send.
            guard try db.first("SELECT 1 FROM floors WHERE id = ?", item.entityId) != nil, let path = item.payload,
                  let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value else { return .obsolete }
            return .request(ItemRequests.worldMap(server, floorId: item.entityId, path: path, size: size))
        case .panorama:
            guard let row = try db.first("SELECT floor_id, room_id, path, content_type, size, sha256, x, y, heading, camera_height FROM panoramas WHERE id = ?",
                                         item.entityId) else { return .obsolete }
            let (heading, height) = (try row.decodeIfPresent(8, as: Double.self), try row.decodeIfPresent(9, as: Double.self))
            let position = try row.decodeIfPresent(6, as: Double.self).flatMap { x in
                try row.decodeIfPresent(7, as: Double.self).flatMap { y in try? PanoramaPosition(x: x, y: y, heading: heading, height: height) }
            }
            return .panorama(PanoramaFile(id: item.entityId, floorId: try row.decode(0, as: String.self), roomId: try row.decodeIfPresent(1, as: String.self), position: position,
                                          path: try row.decode(2, as: String.self), contentType: try row.decode(3, as: String.self), size: try row.decode(4, as: Int64.self), sha256: try row.decode(5, as: String.self)))
        case .deleteProperty:
            return .request(ItemRequests.deleteProperty(server, id: item.entityId))
        }
    }
}

extension QueueItem {
    var uploadItem: UploadItem {
        UploadItem(propertyId: propertyId, kind: kind.uploadKind, entityId: entityId)
    }
}

extension Queue.Kind {
    var uploadKind: UploadKind {
        switch self {
        case .property: return .property
        case .floor: return .floor
        case .plan: return .plan
        case .worldmap: return .worldMap
        case .panorama: return .panorama
        case .deleteProperty: return .propertyDeletion
        }
    }
}
