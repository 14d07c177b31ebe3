import Foundation
import NoughtyTours

/// The commands, each a small function over the library. Writes are local and queued at
/// once (offline first); `tours sync` uploads.
enum Commands {
    static func run(_ words: [String]) async throws(CLIError) {
        // --config may come anywhere.
        var rest = words[...]
        var configPath: String?
        if let index = rest.firstIndex(of: "--config") {
            guard index + 1 < rest.endIndex else { throw .usage("--config needs a path") }
            configPath = rest[index + 1]
            rest.removeSubrange(index...index + 1)
        }
        let path = ClientConfig.path(configPath)
        guard let command = rest.popFirst() else { throw .usage("no command") }
        switch command {
        case "init":
            try await initialize(Arguments(rest, valued: ["--server", "--token", "--storage"], flags: []), path)
        case "property":
            guard let action = rest.popFirst() else { throw .usage("property needs create, list, show, download or delete") }
            let arguments = try Arguments(rest, valued: ["--floors", "--meta"], flags: ["--json", "--remote"])
            let tours = try await ClientConfig.load(path).open()
            switch action {
            case "create": try await PropertyCommands.create(tours, arguments)
            case "list": try await PropertyCommands.list(tours, arguments)
            case "show": try await PropertyCommands.show(tours, arguments)
            case "download": try await PropertyCommands.download(tours, arguments)
            case "delete": try await PropertyCommands.delete(tours, arguments)
            default: throw .usage("unknown property command \"\(action)\"")
            }
        case "plan":
            let arguments = try Arguments(rest, valued: ["--floor", "--mode", "--worldmap"], flags: ["--json"])
            try await CaptureCommands.plan(try await ClientConfig.load(path).open(), arguments)
        case "worldmap":
            let arguments = try Arguments(rest, valued: ["--floor"], flags: [])
            try await CaptureCommands.worldMap(try await ClientConfig.load(path).open(), arguments)
        case "panorama":
            guard rest.popFirst() == "add" else { throw .usage("panorama needs add") }
            let arguments = try Arguments(rest, valued: ["--floor", "--room"], flags: ["--json"])
            try await CaptureCommands.addPanoramas(try await ClientConfig.load(path).open(), arguments)
        case "sync":
            try await SyncCommands.sync(try await ClientConfig.load(path).open(), try Arguments(rest, valued: [], flags: ["--json"]))
        case "status":
            try await SyncCommands.status(try await ClientConfig.load(path).open(), try Arguments(rest, valued: [], flags: ["--json", "--watch"]))
        default:
            throw .usage("unknown command \"\(command)\"")
        }
    }

    /// `tours init`: where the server is and its token, kept for the other commands.
    private static func initialize(_ arguments: Arguments, _ path: String) async throws(CLIError) {
        _ = try arguments.exactly()
        guard let serverText = arguments.value("--server"), let server = URL(string: serverText),
              ["http", "https"].contains(server.scheme?.lowercased() ?? ""), server.host != nil else {
            throw .usage("init needs --server http(s)://HOST:PORT")
        }
        guard let token = arguments.value("--token"), !token.isEmpty else { throw .usage("init needs --token TOKEN") }
        let storage = arguments.value("--storage").map { URL(fileURLWithPath: $0) } ?? ClientConfig.defaultStorage
        let config = ClientConfig(server: server, token: token, storage: storage)
        _ = try await config.open() // local storage can be made, or init fails now
        try config.save(path)
        Output.line("configured \(server.absoluteString), local storage in \(storage.path) (\(path))")
    }
}

/// `tours property create|list|show|delete`.
enum PropertyCommands {
    static func create(_ tours: NoughtyTours, _ arguments: Arguments) async throws(CLIError) {
        let name = try arguments.exactly("NAME")[0]
        let floors = try arguments.integer("--floors", 1...200) ?? 1
        var metadata: [String: String] = [:]
        for pair in arguments.values("--meta") {
            guard let equals = pair.firstIndex(of: "=") else { throw .usage("--meta takes KEY=VALUE") }
            metadata[String(pair[..<equals])] = String(pair[pair.index(after: equals)...])
        }
        let property = try await library { () async throws(NoughtyToursError) in
            try await tours.properties.createProperty(name: name, floorCount: floors, metadata: metadata)
        }
        // The id alone, so that scripts can keep it: PROPERTY=$(tours property create ...).
        if arguments.has("--json") { Output.json(Output.property(property)) } else { Output.line(property.id) }
    }

    static func list(_ tours: NoughtyTours, _ arguments: Arguments) async throws(CLIError) {
        _ = try arguments.exactly()
        guard !arguments.has("--remote") else {
            let remote = try await library { () async throws(NoughtyToursError) in try await tours.properties.remoteProperties() }
            if arguments.has("--json") {
                Output.json(["properties": remote.map(Output.remoteProperty)])
            } else {
                remote.forEach { Output.line(Output.summary($0)) }
            }
            return
        }
        let statuses = try await allStatuses(tours)
        if arguments.has("--json") {
            Output.json(["properties": statuses.map(Output.status)])
        } else {
            statuses.forEach { Output.line(Output.summary($0)) }
        }
    }

    static func show(_ tours: NoughtyTours, _ arguments: Arguments) async throws(CLIError) {
        let property = try await find(tours, try arguments.exactly("PROPERTY_ID")[0])
        let status = try await library { () async throws(NoughtyToursError) in try await tours.properties.status(of: property) }
        var floors: [[String: Any]] = []
        for floor in try await library({ () async throws(NoughtyToursError) in try await tours.properties.floors(of: property) }) {
            let rooms = try await library { () async throws(NoughtyToursError) in try await tours.properties.rooms(of: floor) }
            let continuable = try await library { () async throws(NoughtyToursError) in try await tours.structureCapture.isContinuable(floor) }
            floors.append(["id": floor.id, "number": floor.number ?? 0, "name": floor.name ?? NSNull(), "continuable": continuable,
                           "rooms": rooms.map { ["id": $0.id, "name": $0.name ?? NSNull()] as [String: Any] }])
        }
        if arguments.has("--json") {
            Output.json(["status": Output.status(status), "floors": floors])
            return
        }
        Output.line(Output.summary(status))
        for floor in floors {
            Output.line("  floor \(floor["number"] ?? 0)  \(floor["id"] ?? "")  \(floor["name"] as? String ?? "")"
                        + ((floor["continuable"] as? Bool) == true ? "  (continuable)" : ""))
            for room in floor["rooms"] as? [[String: Any]] ?? [] {
                Output.line("    room \(room["id"] ?? "")  \(room["name"] as? String ?? "(unnamed)")")
            }
        }
    }

    /// `tours property download ID`: the server's property into local storage, to continue
    /// its floors from this station.
    static func download(_ tours: NoughtyTours, _ arguments: Arguments) async throws(CLIError) {
        let id = try arguments.exactly("PROPERTY_ID")[0]
        let property = try await library { () async throws(NoughtyToursError) in try await tours.properties.download(propertyId: id) }
        let status = try await library { () async throws(NoughtyToursError) in try await tours.properties.status(of: property) }
        let continuable = try await library { () async throws(NoughtyToursError) in try await tours.structureCapture.continuableFloors(of: property) }
        if arguments.has("--json") {
            Output.json(["status": Output.status(status), "continuableFloors": continuable.map { $0.number ?? 0 }])
        } else {
            Output.line(Output.summary(status))
            if !continuable.isEmpty {
                Output.line("  continuable floors: " + continuable.map { "\($0.number ?? 0)" }.joined(separator: ", "))
            }
        }
    }

    static func delete(_ tours: NoughtyTours, _ arguments: Arguments) async throws(CLIError) {
        let property = try await find(tours, try arguments.exactly("PROPERTY_ID")[0])
        try await library { () async throws(NoughtyToursError) in try await tours.properties.deleteProperty(property) }
        Output.line("deleted \(property.id) here; the server's copy goes with the next tours sync")
    }

    /// The status of every property, oldest first.
    static func allStatuses(_ tours: NoughtyTours) async throws(CLIError) -> [PropertyStatus] {
        var statuses: [PropertyStatus] = []
        for property in try await library({ () async throws(NoughtyToursError) in try await tours.properties.properties() }) {
            statuses.append(try await library { () async throws(NoughtyToursError) in try await tours.properties.status(of: property) })
        }
        return statuses
    }

    /// The property of an id, or `notFound`.
    static func find(_ tours: NoughtyTours, _ id: String) async throws(CLIError) -> Property {
        guard let property = try await library({ () async throws(NoughtyToursError) in try await tours.properties.property(id: id.lowercased()) }) else {
            throw .library(.notFound)
        }
        return property
    }

    /// The floor of a property by number (`--floor`, 0 by default), or `notFound`.
    static func floor(_ tours: NoughtyTours, _ property: Property, _ arguments: Arguments) async throws(CLIError) -> Floor {
        let number = try arguments.integer("--floor", 0...199) ?? 0
        let floors = try await library { () async throws(NoughtyToursError) in try await tours.properties.floors(of: property) }
        guard let floor = floors.first(where: { $0.number == number }) else { throw .library(.notFound) }
        return floor
    }
}
