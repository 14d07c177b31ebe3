import NTAPIModel
import NTFloorPlans

/// The tour as a dollhouse: every floor's rooms (outline in metres on the plan, height, name
/// and area in the visitor's units) stacked at its elevation, each room drawn in the photographs
/// of its panoramas whose position is known (each point in the nearest one's, projected from
/// where it was taken), and those panoramas as dots that walk in. The page carries it as JSON (`data-house`) for the script to
/// draw in WebGL; it is made from the plan the API already has. Pure.
struct Dollhouse {
    /// A room without a height stands this tall; a floor stands on the tallest room below it.
    static let defaultHeight = 2.5
    /// An outline with more points is drawn from every k-th of them: a page stays small, and
    /// the script's triangulation (cubic in the points at worst) stays quick.
    static let maxPointsPerRoom = 256
    /// The photographs one room is drawn with at most: the script's shader holds this many.
    static let maxPhotosPerRoom = 4

    struct Room {
        let name: String
        let points: [(x: Double, y: Double)]
        let height: Double
        let area: String
        /// The panoramas its walls and floor are drawn with, the first `maxPhotosPerRoom` in walk
        /// order; none: flat colours.
        let photos: [Photo]
    }

    /// A panorama as a camera on the plan: its page or preview (`url`), where it was taken, how
    /// high above its floor (the capture's, else `panoramaHeightMetres`), and the plan bearing
    /// of its image's centre (degrees clockwise from the plan's up; nil: unknown). A room's
    /// photographs are projected from there, and a move travels between two.
    struct Camera {
        let url: String
        let x: Double
        let y: Double
        let height: Double
        let heading: Double?

        func write(into writer: inout JSONWriter) {
            writer.key("heading")
            writer.double(heading)
            writer.key("height")
            writer.double(height)
            writer.key("url")
            writer.string(url)
            writer.key("x")
            writer.double(x)
            writer.key("y")
            writer.double(y)
        }
    }

    /// A room's photograph: its panorama's camera, `url` its preview.
    typealias Photo = Camera

    /// A dot that walks in: its panorama's camera, `url` its page.
    struct Spot {
        let camera: Camera
        let label: String
        let current: Bool
    }

    struct Floor {
        let name: String
        /// Metres above the lowest floor.
        let base: Double
        let current: Bool
        let rooms: [Room]
        let spots: [Spot]
    }

    let floors: [Floor]

    /// Nil when no floor has a room to draw.
    init?(_ walk: TourWalk, at index: Int, _ paths: ViewerPaths, units: MeasureUnits, photoWidth: Int, cameraHeight: Double) {
        var floors: [Floor] = []
        var base = 0.0
        let here = walk.stops[index].floor.floor.id
        var seen = Set<String>()
        for stop in walk.stops where seen.insert(stop.floor.floor.id).inserted {
            let floor = stop.floor
            let rooms = floor.floor.rooms.compactMap { room -> Room? in
                guard let outline = PlanGeometry.points(room.outline), outline.count >= 3 else { return nil }
                let points = PlanGeometry.bounded(outline, to: Self.maxPointsPerRoom)
                let height = room.height.flatMap { $0 > 0 && $0 < 100 ? $0 : nil } ?? Self.defaultHeight
                let photos = walk.stops.filter { $0.room?.id == room.id }.compactMap { stop in
                    Self.camera(stop.panorama, url: paths.preview(stop.panorama.id, width: photoWidth), height: cameraHeight)
                }.prefix(Self.maxPhotosPerRoom)
                return Room(name: room.name ?? "Room", points: points, height: height, area: RoomMeasure.area(RoomMeasure(outline).area, in: units), photos: Array(photos))
            }
            let spots = walk.stops.indices.compactMap { other -> Spot? in
                let stop = walk.stops[other]
                guard stop.floor.floor.id == floor.floor.id else { return nil }
                return Self.camera(stop.panorama, url: paths.panorama(stop.panorama.id), height: cameraHeight)
                    .map { Spot(camera: $0, label: stop.title, current: other == index) }
            }
            floors.append(Floor(name: FloorTitle.of(number: floor.floor.number, name: floor.floor.name), base: base,
                                current: floor.floor.id == here, rooms: rooms, spots: spots))
            base += rooms.map(\.height).max() ?? Self.defaultHeight
        }
        guard floors.contains(where: { !$0.rooms.isEmpty }) else { return nil }
        self.floors = floors
    }

    /// The camera of a panorama whose place is known, `url` naming it; nil otherwise.
    private static func camera(_ panorama: PanoramaDocument, url: String, height: Double) -> Camera? {
        panorama.position.map { Camera(url: url, x: $0.x, y: $0.y, height: $0.height ?? height, heading: panorama.heading) }
    }

    /// `{"floors": [{"name", "base", "current", "rooms": [{"name", "height", "area", "points", "photos": [{"url", "x", "y", "height", "heading"}]}],
    /// "spots": [{"x", "y", "height", "heading", "url", "label", "current"}]}]}`.
    var json: String {
        var writer = JSONWriter(capacity: 4096)
        writer.object { writer in
            writer.key("floors")
            writer.array(floors) { writer, floor in
                writer.object { writer in
                    writer.key("base")
                    writer.double(floor.base)
                    writer.key("current")
                    writer.bool(floor.current)
                    writer.key("name")
                    writer.string(floor.name)
                    writer.key("rooms")
                    writer.array(floor.rooms) { writer, room in
                        writer.object { writer in
                            writer.key("area")
                            writer.string(room.area)
                            writer.key("height")
                            writer.double(room.height)
                            writer.key("name")
                            writer.string(room.name)
                            writer.key("photos")
                            writer.array(room.photos) { writer, photo in writer.object { photo.write(into: &$0) } }
                            writer.key("points")
                            writer.array(room.points) { writer, point in
                                writer.array([point.x, point.y]) { writer, value in writer.double(value) }
                            }
                        }
                    }
                    writer.key("spots")
                    writer.array(floor.spots) { writer, spot in
                        writer.object { writer in
                            writer.key("current")
                            writer.bool(spot.current)
                            writer.key("label")
                            writer.string(spot.label)
                            spot.camera.write(into: &writer)
                        }
                    }
                }
            }
        }
        return String(decoding: writer.bytes, as: UTF8.self)
    }
}
