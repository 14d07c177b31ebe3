#if canImport(Glibc)
import Glibc
#endif
import NTAPIModel
import NTFloorPlans
import NTHashing
import NTImagePreviews
import NTServiceModel
import NTServiceStorage
import Synchronization

/// A published floor plan asked for: a home's (a PDF: a cover, then a page per floor), or a
/// floor's, as SVG, PDF, or PNG (of a width the caller may pick).
package enum FloorPlanAsk: Sendable, Equatable {
    case home(propertyId: String)
    /// A PNG's `width`, when its caller picked one.
    case floor(String, FloorPlanFormat, width: Int?)
}

/// A published floor plan, made: its bytes, media type, and the version of what it shows (its
/// ETag: the same plan revisions, branding and options always draw the same).
package struct FloorPlanMade: Sendable {
    package var bytes: [UInt8]
    package var mediaType: String
    package var tag: String
    /// What a download names it: `dune-house-ground-floor.pdf`.
    package var fileName: String
}

/// Floor plans an agent publishes, drawn by the daemon from what the tour holds (the floors'
/// room outlines, the panoramas' headings for north, the branding), on the image pool within
/// the image memory budget, and kept by the version of what they show (`FloorPlanCache`): a new
/// plan, a renamed floor, a changed branding is a new version, drawn anew. Knows no HTTP.
package struct FloorPlans: Sendable {
    package let records: Records
    package let previews: PreviewCache
    package let cache: FloorPlanCache
    package let settings: ImageSettings

    package init(records: Records, previews: PreviewCache, cache: FloorPlanCache, settings: ImageSettings) {
        self.records = records
        self.previews = previews
        self.cache = cache
        self.settings = settings
    }

    /// The plan asked for, branded with the tenant's branding or not. Through a share link
    /// (`within`), only that link's property's. A plan kept already is found by its version,
    /// read without the logo; one to draw is read again with it, in one snapshot, and kept under
    /// that snapshot's version.
    package func plan(_ tenant: Int64, _ ask: FloorPlanAsk, branded: Bool, within: String? = nil) async throws -> FloorPlanMade {
        let seen = try await read(tenant, ask, within: within, withLogo: false)
        let (seenFile, seenTag) = try identify(tenant, ask, seen, branded: branded)
        if let bytes = cache.bytes(seenTag) {
            return FloorPlanMade(bytes: bytes, mediaType: seenFile.format.mediaType, tag: seenTag, fileName: Self.fileName(seen.tour, seenFile))
        }
        let drawn = branded ? try await read(tenant, ask, within: within, withLogo: true) : seen
        let (file, tag) = try identify(tenant, ask, drawn, branded: branded)
        let source = Self.source(drawn.tour, branding: drawn.branding, logo: drawn.logo, branded: branded)
        let bytes: [UInt8]
        do {
            bytes = try await previews.memory.holding(file.memoryBytes(source), for: "a floor plan") {
                try await previews.decoders.run { try file.make(from: source) }
            }
        } catch let error as FloorPlanError {
            throw ServiceError(.internal, "the floor plan could not be drawn: \(error.message)")
        } catch let error as PreviewError {
            throw ServiceError(.internal, "the floor plan could not be drawn: \(error.message)")
        }
        cache.keep(bytes, as: tag)
        return FloorPlanMade(bytes: bytes, mediaType: file.format.mediaType, tag: tag, fileName: Self.fileName(drawn.tour, file))
    }

    /// The file `ask` names in a snapshot, and its version.
    private func identify(_ tenant: Int64, _ ask: FloorPlanAsk, _ snapshot: Snapshot, branded: Bool) throws -> (FloorPlanFile, String) {
        let tour = snapshot.tour
        let file: FloorPlanFile
        switch ask {
        case .home:
            file = .homePDF
        case .floor(let id, let format, let width):
            guard let index = tour.floors.firstIndex(where: { $0.floor.id == id }) else { throw ServiceError.notFound("floor", id) }
            switch format {
            case .svg: file = .floorSVG(index: index)
            case .pdf: file = .floorPDF(index: index)
            case .png:
                let width = width ?? settings.floorPlanPngWidth
                guard (Self.minPngWidth...settings.maxFloorPlanPngWidth).contains(width) else {
                    throw ServiceError.badRequest("width must be \(Self.minPngWidth) to \(settings.maxFloorPlanPngWidth) pixels (maxFloorPlanPngWidth)")
                }
                file = .floorPNG(index: index, width: width)
            }
        }
        guard tour.floors.contains(where: { !$0.floor.rooms.isEmpty }) else {
            throw ServiceError(.notFound, "no floor plan yet: rooms come with the capture's plan (PUT /v1/floors/{floorId}/plan)")
        }
        return (file, Self.version(tenant, tour, snapshot.branding, branded: branded, file))
    }

    static let minPngWidth = 200

    /// What names a drawing, without reading its outlines: the tenant's property, its floors'
    /// names and plan revisions (a plan's every change is a new revision: its rooms, their names
    /// and outlines), north, the branding as of its last change (its logo, name, contact and
    /// units), whether branded, and the file. A hex SHA-256: the cache's key and the ETag.
    static func version(_ tenant: Int64, _ tour: TourDocument, _ branding: BrandingDocument, branded: Bool, _ file: FloorPlanFile) -> String {
        var parts = ["1", String(tenant), tour.property.id, tour.property.name, file.name, branded ? "branded" : "unbranded",
                     branding.updatedAt ?? "-", branding.units.rawValue, branding.floorNames.rawValue,
                     north(tour.floors.flatMap(\.panoramas)).map { Numerals.decimal($0, places: 3) } ?? "-"]
        for floor in tour.floors {
            parts += [floor.floor.id, String(floor.floor.number), floor.floor.name ?? "-", String(floor.floor.planRevision)]
        }
        return ByteEncoding.hex(StreamingDigest.hash(.sha256, Array(parts.joined(separator: "\u{0}").utf8)))
    }

    /// What a plan is drawn from, read at one moment.
    private struct Snapshot: Sendable {
        var tour: TourDocument
        var branding: BrandingDocument
        var logo: [UInt8]?
    }

    /// The tour (its floors named as the tenant names floors), the branding and (`withLogo`)
    /// its logo, in one snapshot: the version named from the branding is the logo drawn.
    private func read(_ tenant: Int64, _ ask: FloorPlanAsk, within: String?, withLogo: Bool) async throws -> Snapshot {
        try await records.read { db -> Snapshot in
            let propertyId = switch ask {
            case .home(let id): id
            case .floor(let id, _, _): try await ViewerStore.propertyId(db, tenant, of: .floor(id))
            }
            guard let propertyId, within == nil || within == propertyId, var tour = try await TourStore.tour(db, tenant, propertyId: propertyId) else {
                throw ask.notFound
            }
            let branding = try await BrandingStore.branding(db, tenant)
            for index in tour.floors.indices where tour.floors[index].floor.name == nil {
                tour.floors[index].floor.name = branding.floorNames.title(tour.floors[index].floor.number)
            }
            return Snapshot(tour: tour, branding: branding, logo: withLogo ? try await BrandingStore.logo(db, tenant)?.jpeg : nil)
        }
    }

    /// What the sheets are drawn from: each floor's rooms with an outline, north from the
    /// panoramas that give both their heading on the plan and their file's compass heading.
    static func source(_ tour: TourDocument, branding: BrandingDocument, logo: [UInt8]?, branded: Bool) -> FloorPlanSource {
        let floors = tour.floors.map { floor in
            FloorPlanSource.Floor(name: floor.floor.name ?? "Floor \(floor.floor.number)", rooms: floor.floor.rooms.compactMap { room in
                guard let points = PlanGeometry.points(room.outline), points.count >= 3 else { return nil }
                return FloorPlanSource.Room(name: room.name ?? "Room", points: points)
            })
        }
        let brand = branded ? FloorPlanSource.Brand(name: branding.name, contact: branding.contact, logo: logo) : nil
        return FloorPlanSource(title: tour.property.name, floors: floors, north: north(tour.floors.flatMap(\.panoramas)), brand: brand,
                               units: ShownUnits(branding.units, naming: branding.floorNames), paper: Paper(branding.floorNames))
    }

    /// North, clockwise from up the plan, as the panoramas tell it: where one's heading on the
    /// plan and its file's compass heading are both known, north is the first less the second
    /// (their circular mean over several); nil when none tells.
    static func north(_ panoramas: [PanoramaDocument]) -> Double? {
        var (x, y) = (0.0, 0.0)
        for panorama in panoramas {
            guard let onPlan = panorama.position?.heading, let compass = panorama.fileGeometry?.heading else { continue }
            let angle = (onPlan - compass) * .pi / 180
            (x, y) = (x + cos(angle), y + sin(angle))
        }
        guard x * x + y * y > 1e-12 else { return nil }
        let degrees = atan2(y, x) * 180 / .pi
        return degrees < 0 ? degrees + 360 : degrees
    }

    /// `dune-house-ground-floor.pdf`: the property's name and the floor's, as a file name.
    static func fileName(_ tour: TourDocument, _ file: FloorPlanFile) -> String {
        let floorName: String? = switch file {
        case .floorSVG(let index), .floorPDF(let index), .floorPNG(let index, _): tour.floors[index].floor.name
        case .homePDF: "floor plans"
        }
        let words = ([tour.property.name] + [floorName].compactMap { $0 }).joined(separator: " ").lowercased()
        var slug = ""
        for character in words.unicodeScalars {
            if ("a"..."z").contains(character) || ("0"..."9").contains(character) {
                slug.unicodeScalars.append(character)
            } else if !slug.isEmpty, !slug.hasSuffix("-") {
                slug += "-"
            }
        }
        while slug.hasSuffix("-") { slug.removeLast() }
        return String((slug.isEmpty ? "floor-plan" : slug).prefix(80)) + "." + file.format.rawValue
    }
}

extension FloorPlanAsk {
    var notFound: ServiceError {
        switch self {
        case .floor(let id, _, _): ServiceError.notFound("floor", id)
        case .home(let id): ServiceError.notFound("property", id)
        }
    }
}

/// Floor plans drawn, kept by version up to `floorPlanCacheBytes`, the least recently
/// asked for going first.
package final class FloorPlanCache: Sendable {
    private struct State {
        var files: [String: (bytes: [UInt8], used: UInt64)] = [:]
        var held = 0
        var clock: UInt64 = 0
    }

    private let state = Mutex(State())
    let limit: Int

    package init(limit: Int) {
        self.limit = limit
    }

    func bytes(_ tag: String) -> [UInt8]? {
        state.withLock { state in
            guard let file = state.files[tag] else { return nil }
            state.clock += 1
            state.files[tag]?.used = state.clock
            return file.bytes
        }
    }

    func keep(_ bytes: [UInt8], as tag: String) {
        guard bytes.count <= limit else { return }
        state.withLock { state in
            state.clock += 1
            if let old = state.files.updateValue((bytes, state.clock), forKey: tag) { state.held -= old.bytes.count }
            state.held += bytes.count
            while state.held > limit, let oldest = state.files.min(by: { $0.value.used < $1.value.used }) {
                state.files.removeValue(forKey: oldest.key)
                state.held -= oldest.value.bytes.count
            }
        }
    }

    /// Bytes held now (`/metrics`).
    var held: Int { state.withLock { $0.held } }
}
