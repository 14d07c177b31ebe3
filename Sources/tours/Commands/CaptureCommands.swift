import Foundation
import NoughtyTours

/// `tours plan`, `tours worldmap`, `tours panorama add`: captures from files, applied locally
/// at once and queued for upload.
enum CaptureCommands {
    /// A plan file: `{"rooms": [{"room": "ID of a room to keep" (optional), "name": "Kitchen",
    /// "outline": [[x, y], ...], "height": 2.5, "capture": {...}}], "structure": {...}}`,
    /// outlines in metres; `capture` and `structure` are the capture's opaque output.
    static func plan(_ tours: NoughtyTours, _ arguments: Arguments) async throws(CLIError) {
        let values = try arguments.exactly("PROPERTY_ID", "PLAN_FILE")
        let property = try await PropertyCommands.find(tours, values[0])
        let floor = try await PropertyCommands.floor(tours, property, arguments)
        guard let mode = StructureCaptureMode(rawValue: arguments.value("--mode") ?? "newScan") else {
            throw .usage("--mode is newScan or continueScan")
        }
        let existing = try await library { () async throws(NoughtyToursError) in try await tours.properties.rooms(of: floor) }
        let (rooms, structure) = try readPlan(values[1], existing: existing)
        let worldMap = arguments.value("--worldmap").map { URL(fileURLWithPath: $0) }
        let result = try await library { () async throws(NoughtyToursError) in
            try await tours.structureCapture.apply(floor: floor, mode: mode, rooms: rooms, structure: structure, worldMap: worldMap)
        }
        if arguments.has("--json") {
            Output.json(["floor": floor.id, "rooms": result.map { ["id": $0.id, "name": $0.name ?? NSNull()] as [String: Any] }])
        } else {
            Output.line("floor \(floor.number ?? 0) has \(Output.count(result.count, "room")): " + result.map { "\($0.id) \($0.name ?? "(unnamed)")" }.joined(separator: ", "))
        }
    }

    static func readPlan(_ path: String, existing: [Room]) throws(CLIError) -> (rooms: [CapturedRoom], structure: Data?) {
        guard let data = FileManager.default.contents(atPath: path) else { throw .library(.invalidInput("cannot read the plan file \(path)")) }
        guard let json = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any], let rooms = json["rooms"] as? [[String: Any]] else {
            throw .library(.invalidInput("\(path) is not a plan: {\"rooms\": [{\"name\", \"outline\": [[x, y], ...], \"height\"}]}"))
        }
        var captured: [CapturedRoom] = []
        for (index, room) in rooms.enumerated() {
            // Numbers, or a clear error: nothing is dropped or guessed.
            guard let points = room["outline"] as? [[Any]] else { throw .library(.invalidInput("\(path): rooms[\(index)] has no outline")) }
            let outline = try points.map { point throws(CLIError) -> [Double] in
                let numbers = point.compactMap { $0 as? NSNumber }
                guard numbers.count == point.count, !numbers.contains(where: { String(cString: $0.objCType) == "c" }) else { // "c": a JSON boolean
                    throw .library(.invalidInput("\(path): rooms[\(index)].outline holds something that is not a number"))
                }
                return numbers.map(\.doubleValue)
            }
            if let height = room["height"], !(height is NSNull), (height as? NSNumber) == nil {
                throw .library(.invalidInput("\(path): rooms[\(index)].height is not a number"))
            }
            let kept = try (room["room"] as? String).map { id throws(CLIError) -> Room in
                guard let room = existing.first(where: { $0.id == id }) else { throw .library(.invalidInput("\(path): rooms[\(index)]: no room \(id) on this floor")) }
                return room
            }
            captured.append(CapturedRoom(room: kept, name: room["name"] as? String, outline: outline, height: (room["height"] as? NSNumber)?.doubleValue,
                                         capture: try opaque(room["capture"])))
        }
        return (captured, try opaque(json["structure"]))
    }

    /// Capture output from the plan file, as JSON bytes for the library.
    private static func opaque(_ value: Any?) throws(CLIError) -> Data? {
        guard let value, !(value is NSNull) else { return nil }
        do {
            return try JSONSerialization.data(withJSONObject: value, options: [.fragmentsAllowed, .sortedKeys])
        } catch {
            throw .library(.invalidInput("capture output the plan file holds cannot be written as JSON"))
        }
    }

    static func worldMap(_ tours: NoughtyTours, _ arguments: Arguments) async throws(CLIError) {
        let values = try arguments.exactly("PROPERTY_ID", "WORLD_MAP_FILE")
        let property = try await PropertyCommands.find(tours, values[0])
        let floor = try await PropertyCommands.floor(tours, property, arguments)
        try await library { () async throws(NoughtyToursError) in try await tours.structureCapture.saveWorldMap(URL(fileURLWithPath: values[1]), for: floor) }
        Output.line("saved the world map of floor \(floor.number ?? 0)")
    }

    /// `--at X,Y[,HEADING]`: metres on the plan, and degrees.
    static func position(_ text: String) throws(CLIError) -> PanoramaPosition {
        let numbers = text.split(separator: ",", omittingEmptySubsequences: false).map { Double($0.trimmingCharacters(in: .whitespaces)) }
        guard numbers.count == 2 || numbers.count == 3, let x = numbers[0], let y = numbers[1], numbers.count == 2 || numbers[2] != nil else {
            throw .usage("--at takes X,Y or X,Y,HEADING: metres on the floor's plan, and degrees, as numbers")
        }
        do {
            return try PanoramaPosition.onPlan(x: x, y: y, heading: numbers.count == 3 ? numbers[2] : nil)
        } catch {
            throw .library(error)
        }
    }

    /// Each image becomes a panorama of the floor (or `--room`, on whichever floor holds it),
    /// as if captured with good readings; the files themselves are left as they are. Every
    /// image is checked by its content first: one that is not an image adds none.
    static func addPanoramas(_ tours: NoughtyTours, _ arguments: Arguments) async throws(CLIError) {
        guard arguments.positional.count >= 2 else { throw .usage("expected PROPERTY_ID IMAGE...") }
        let property = try await PropertyCommands.find(tours, arguments.positional[0])
        let images = try arguments.positional.dropFirst().map { path throws(CLIError) -> (path: String, content: ImageContent) in
            switch ImageContent.inspect(file: path, name: (path as NSString).lastPathComponent) {
            case .success(let content): return (path, content)
            case .failure(let error): throw .library(error)
            }
        }
        let position = try arguments.value("--at").map { text throws(CLIError) in try Self.position(text) }
        guard position == nil || images.count == 1 else { throw .usage("--at places one image: give a single IMAGE with it") }
        let session: PanoramaCaptureSession
        let floor: Floor
        if let roomId = arguments.value("--room") {
            let room = try await PropertyCommands.room(tours, property, roomId, arguments)
            session = try await library { () async throws(NoughtyToursError) in try await tours.panoramaCapture.session(room: room) }
            floor = await session.floor
        } else {
            floor = try await PropertyCommands.floor(tours, property, arguments)
            session = try await library { () async throws(NoughtyToursError) in try await tours.panoramaCapture.session(floor: floor) }
        }
        var added: [String] = []
        for (path, content) in images {
            // The capture takes over its folder; a copy goes in, the user's file stays.
            let name = (path as NSString).lastPathComponent
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tours-\(UUID().uuidString)")
            do {
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                try FileManager.default.copyItem(atPath: path, toPath: folder.appendingPathComponent(name).path)
            } catch {
                try? FileManager.default.removeItem(at: folder)
                throw .library(.invalidInput("cannot read the image \(path)"))
            }
            let outcome: PanoramaOutcome
            do {
                outcome = try await session.record(folder: folder, image: name, readings: CaptureReadings(iso: 100, shutterSeconds: 1.0 / 60),
                                                position: position)
            } catch {
                try? FileManager.default.removeItem(at: folder)
                throw .library(error)
            }
            guard case .kept(let id) = outcome else { throw .library(.invalidInput("\(path) was discarded: \(outcome)")) }
            added.append(id)
            if !arguments.has("--json") { Output.line("\(id)  \(path)  \(content.width)×\(content.height) \(content.format.rawValue)") }
        }
        _ = await session.finish()
        if arguments.has("--json") { Output.json(["floor": floor.id, "panoramas": added]) }
    }
}
