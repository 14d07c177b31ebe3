#if canImport(Glibc)
import Glibc
#endif
import NTAPIModel
import NTFloorPlans
import Synchronization

/// A tour as a visitor walks it: every panorama in one order (floors by number; on each floor
/// its rooms in the plan's order, each room's panoramas in the tenant's order, else as they
/// were captured, else as uploaded: `PanoramaDocument.walkOrder`; then the floor's panoramas
/// without a room), and from each, the panoramas one can step to. Pure: the pages and their
/// tests read it alike.
struct TourWalk {
    struct Stop {
        let panorama: PanoramaDocument
        let floor: TourDocument.Floor
        let room: RoomDocument?
        /// Its place among the panoramas of its room (or of its floor's, without a room): 1-based.
        let place: Int
        let of: Int

        /// "Living room · 2 of 3"; "Living room" alone when it is the room's only one.
        var title: String {
            let name = room.map { $0.name ?? "Room" } ?? FloorTitle.of(number: floor.floor.number, name: floor.floor.name)
            return of > 1 ? "\(name) · \(place) of \(of)" : name
        }
    }

    /// A way from one panorama to another: `longitude`, when both positions and the first's
    /// heading are known, is where the other stands as seen in the first's image: degrees
    /// clockwise from the image's centre, in (-180, 180]; `distance`, when both positions are
    /// known, how far it stands, in metres on the plan.
    struct Link: Equatable {
        let target: Int
        let longitude: Double?
        let distance: Double?
    }

    let stops: [Stop]

    init(_ tour: TourDocument) {
        var stops: [Stop] = []
        for floor in tour.floors.sorted(by: { $0.floor.number < $1.floor.number }) {
            let panoramas = floor.panoramas.sorted(by: PanoramaDocument.walkOrder)
            var groups: [(RoomDocument?, [PanoramaDocument])] = floor.floor.rooms.map { room in (room, panoramas.filter { $0.roomId == room.id }) }
            let roomIds = Set(floor.floor.rooms.map(\.id))
            groups.append((nil, panoramas.filter { $0.roomId.map { !roomIds.contains($0) } ?? true }))
            for (room, panoramas) in groups {
                for (index, panorama) in panoramas.enumerated() {
                    stops.append(Stop(panorama: panorama, floor: floor, room: room, place: index + 1, of: panoramas.count))
                }
            }
        }
        self.stops = stops
    }

    func index(of panoramaId: String) -> Int? {
        stops.firstIndex { $0.panorama.id == panoramaId }
    }

    /// The other panoramas of its room and those of the rooms that share a wall with it (for
    /// one without a room: the others of its floor without a room), in walk order.
    func links(from index: Int) -> [Link] {
        let here = stops[index]
        let neighbours: Set<String> = here.room.map { room in RoomWalls.neighbours(of: here.floor.floor)[room.id, default: []].union([room.id]) } ?? []
        return stops.indices.filter { other in
            guard other != index, stops[other].floor.floor.id == here.floor.floor.id else { return false }
            if let room = stops[other].room { return neighbours.contains(room.id) }
            return here.room == nil
        }.map { other in
            let (from, to) = (here.panorama.position, stops[other].panorama.position)
            return Link(target: other, longitude: Self.longitude(from: from, heading: here.panorama.heading, to: to), distance: Self.distance(from: from, to: to))
        }
    }

    /// How far `target` stands from `origin`, in metres; nil when either position is unknown.
    static func distance(from origin: PanoramaPosition?, to target: PanoramaPosition?) -> Double? {
        guard let origin, let target else { return nil }
        return ((target.x - origin.x) * (target.x - origin.x) + (target.y - origin.y) * (target.y - origin.y)).squareRoot()
    }

    /// Where `target` stands in the image taken at `origin` whose centre faces `heading`, or nil
    /// when either position or the heading is unknown, or they stand at the same point.
    static func longitude(from origin: PanoramaPosition?, heading: Double?, to target: PanoramaPosition?) -> Double? {
        guard let origin, let heading, let target else { return nil }
        let dx = target.x - origin.x, dy = target.y - origin.y
        guard dx * dx + dy * dy > 1e-6 else { return nil }
        // Bearing clockwise from up the plan (y grows down the page).
        let bearing = atan2(dx, -dy) * 180 / .pi
        var relative = (bearing - heading).truncatingRemainder(dividingBy: 360)
        if relative <= -180 { relative += 360 }
        if relative > 180 { relative -= 360 }
        return relative
    }
}

/// Which rooms share a wall, read from their outlines: an edge of one lies along an edge of
/// the other (within `tolerance` metres of its line) for at least `overlap` metres.
enum RoomWalls {
    static let tolerance = 0.15
    static let overlap = 0.5
    /// An outline is compared from at most this many of its points (collinear runs merged
    /// first, then every k-th): a plan within the API's limits (10 rooms of 10,000 points)
    /// made every page compare 9 × 10⁸ pairs of edges.
    static let maxPointsCompared = 256
    /// Plans whose neighbours are kept (a memo per daemon, emptied when full).
    static let plansKept = 512

    /// Each room of `floor` and the other rooms it shares a wall with, worked out once per plan
    /// (its revision and outlines) and kept: a page asks, it does not compute.
    static func neighbours(of floor: FloorDocument) -> [String: Set<String>] {
        let key = PlanKey(floor)
        if let known = kept.withLock({ $0[key] }) { return known }
        let found = neighbours(floor.rooms)
        kept.withLock { kept in
            if kept.count >= plansKept { kept.removeAll() }
            kept[key] = found
        }
        return found
    }

    /// Each room and the others it shares a wall with, each pair compared only when their
    /// bounds (within `tolerance`) meet, each outline from at most `maxPointsCompared` points.
    static func neighbours(_ rooms: [RoomDocument]) -> [String: Set<String>] {
        let outlines = rooms.map { room in PlanGeometry.points(room.outline).map { comparable($0) } ?? [] }
        let bounds = outlines.map(Bounds.init)
        var found: [String: Set<String>] = [:]
        for i in rooms.indices {
            for j in rooms.indices where j > i && bounds[i].meets(bounds[j]) && shareAWall(outlines[i], outlines[j]) {
                found[rooms[i].id, default: []].insert(rooms[j].id)
                found[rooms[j].id, default: []].insert(rooms[i].id)
            }
        }
        return found
    }

    /// An outline as compared: points in the middle of a straight run dropped (a wall is one
    /// edge however many points the scan put on it), then at most `maxPointsCompared`.
    static func comparable(_ points: [(x: Double, y: Double)]) -> [(x: Double, y: Double)] {
        var kept: [(x: Double, y: Double)] = []
        for point in points {
            if kept.count >= 2, onLine(kept[kept.count - 2], kept[kept.count - 1], point) { kept[kept.count - 1] = point } else { kept.append(point) }
        }
        return PlanGeometry.bounded(kept, to: maxPointsCompared)
    }

    /// Whether `b` lies on the straight way from `a` to `c`: the way on from `b` turns less
    /// than half a degree from the way to it (so a gentle curve is not folded into one chord).
    private static func onLine(_ a: (x: Double, y: Double), _ b: (x: Double, y: Double), _ c: (x: Double, y: Double)) -> Bool {
        let (ux, uy, vx, vy) = (b.x - a.x, b.y - a.y, c.x - b.x, c.y - b.y)
        let (u, v) = ((ux * ux + uy * uy).squareRoot(), (vx * vx + vy * vy).squareRoot())
        guard u > 1e-9, v > 1e-9 else { return true } // a point repeated
        return ux * vx + uy * vy > 0 && abs(ux * vy - uy * vx) / (u * v) <= 0.0087
    }

    private struct Bounds {
        var minX = Double.infinity, minY = Double.infinity, maxX = -Double.infinity, maxY = -Double.infinity

        init(_ points: [(x: Double, y: Double)]) {
            for point in points {
                (minX, minY, maxX, maxY) = (min(minX, point.x), min(minY, point.y), max(maxX, point.x), max(maxY, point.y))
            }
        }

        func meets(_ other: Bounds) -> Bool {
            minX <= other.maxX + tolerance && other.minX <= maxX + tolerance && minY <= other.maxY + tolerance && other.minY <= maxY + tolerance
        }
    }

    /// A plan as its neighbours are kept: the floor, its revision, and a fingerprint of its
    /// rooms' ids and outlines (ids are the client's: two tenants may use one), under this
    /// process's random hashing seed, so that nobody can make two plans collide on purpose.
    private struct PlanKey: Hashable {
        let floor: String
        let revision: Int
        let rooms: Int

        init(_ floor: FloorDocument) {
            self.floor = floor.id
            revision = floor.planRevision
            var hasher = Hasher()
            for room in floor.rooms {
                hasher.combine(room.id)
                hasher.combine(room.outline)
            }
            rooms = hasher.finalize()
        }
    }

    private static let kept = Mutex<[PlanKey: [String: Set<String>]]>([:])

    static func shareAWall(_ a: [(x: Double, y: Double)], _ b: [(x: Double, y: Double)]) -> Bool {
        guard a.count >= 2, b.count >= 2 else { return false }
        for i in a.indices {
            let p = a[i], q = a[(i + 1) % a.count]
            for j in b.indices where lieAlong(p, q, b[j], b[(j + 1) % b.count]) {
                return true
            }
        }
        return false
    }

    /// Whether the segment r–s lies on the line of p–q and overlaps p–q long enough.
    private static func lieAlong(_ p: (x: Double, y: Double), _ q: (x: Double, y: Double),
                                 _ r: (x: Double, y: Double), _ s: (x: Double, y: Double)) -> Bool {
        let dx = q.x - p.x, dy = q.y - p.y
        let length = (dx * dx + dy * dy).squareRoot()
        guard length > 1e-9 else { return false }
        let (ux, uy) = (dx / length, dy / length)
        func offset(_ point: (x: Double, y: Double)) -> Double { abs((point.x - p.x) * uy - (point.y - p.y) * ux) }
        func along(_ point: (x: Double, y: Double)) -> Double { (point.x - p.x) * ux + (point.y - p.y) * uy }
        guard offset(r) <= tolerance, offset(s) <= tolerance else { return false }
        let (start, end) = (min(along(r), along(s)), max(along(r), along(s)))
        return min(end, length) - max(start, 0) >= overlap
    }
}

/// A direction in the image, in words for the list of ways on: "ahead", "to the right", "behind, to the left".
enum Direction {
    static func words(_ longitude: Double) -> String {
        let side = longitude > 0 ? "right" : "left"
        switch abs(longitude) {
        case ..<22.5: return "ahead"
        case ..<67.5: return "ahead, to the \(side)"
        case ..<112.5: return "to the \(side)"
        case ..<157.5: return "behind, to the \(side)"
        default: return "behind"
        }
    }
}

/// The property metadata a tenant shows the people it shares a tour with: the keys it marked
/// public by their prefix `public.` (`"public.address": "12 Maple Street"`), labelled by the
/// rest of the key ("Address"; `agent_phone` and `agent-phone` read "Agent phone"), in the
/// stored (canonical: sorted) order of the keys; and the panorama it chose for the cover
/// (`"cover": PANORAMA_ID`).
enum PublicMetadata {
    static let prefix = "public."
    /// The key whose value names the panorama a shared tour's cover shows.
    static let coverKey = "cover"

    static func cover(_ metadata: String) -> String? {
        (try? JSONReader.parse(metadata))?.members?.first { $0.key == coverKey }?.value.string
    }

    static func facts(_ metadata: String) -> [(label: String, value: String)] {
        let members = (try? JSONReader.parse(metadata))?.members ?? []
        return members.compactMap { member in
            guard member.key.hasPrefix(prefix), let value = member.value.string, !value.isEmpty else { return nil }
            let words = String(member.key.dropFirst(prefix.count)).map { $0 == "_" || $0 == "-" ? " " : $0 }
            guard let first = words.first else { return nil }
            return (first.uppercased() + String(words.dropFirst()), value)
        }
    }
}
