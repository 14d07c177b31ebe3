#if canImport(Glibc)
import Glibc
#endif
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
        case "--version", "version":
            return Output.line(Help.version)
        case "--help", "-h":
            return Output.line(Help.overview)
        case "help":
            return Output.line(try rest.popFirst().map { topic throws(CLIError) in try Help.of(topic) } ?? Help.overview)
        default:
            // `tours COMMAND --help`: the command's own text (words after `--` are arguments).
            if rest.prefix(while: { $0 != "--" }).contains(where: { $0 == "--help" || $0 == "-h" }) { return Output.line(try Help.of(command)) }
        }
        switch command {
        case "init":
            try await initialize(Arguments(rest, valued: ["--server", "--token", "--token-file", "--storage"], flags: ["--offline"]), path)
        case "property":
            guard let action = rest.popFirst() else { throw .usage("property needs create, list, show, download or delete") }
            let arguments = try Arguments(rest, valued: ["--floors", "--meta"], flags: ["--json", "--remote", "--yes"])
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
            let arguments = try Arguments(rest, valued: ["--floor", "--room", "--at"], flags: ["--json"])
            try await CaptureCommands.addPanoramas(try await ClientConfig.load(path).open(), arguments)
        case "sync":
            let config = try ClientConfig.load(path)
            try await SyncCommands.sync(try await config.open(), config, try Arguments(rest, valued: [], flags: ["--json"]))
        case "status":
            try await SyncCommands.status(try await ClientConfig.load(path).open(), try Arguments(rest, valued: [], flags: ["--json", "--watch"]))
        case "queue":
            guard let action = rest.popFirst() else { throw .usage("queue needs list or drop") }
            let arguments = try Arguments(rest, valued: [], flags: ["--json"])
            let tours = try await ClientConfig.load(path).open()
            switch action {
            case "list": try await QueueCommands.list(tours, arguments)
            case "drop": try await QueueCommands.drop(tours, arguments)
            default: throw .usage("unknown queue command \"\(action)\"")
            }
        case "grant":
            guard rest.popFirst() == "create" else { throw .usage("grant needs create") }
            let arguments = try Arguments(rest, valued: ["--scope", "--expires"], flags: ["--json"])
            try await GrantCommands.create(try await ClientConfig.load(path).open(), arguments)
        case "prune":
            let config = try ClientConfig.load(path)
            try await QueueCommands.prune(try await config.open(), config, try Arguments(rest, valued: ["--older-than"], flags: ["--json"]))
        default:
            throw .usage("unknown command \"\(command)\"")
        }
    }

    /// `tours init`: where the server is and its token, kept for the other commands once the
    /// server has taken the token (unless `--offline`).
    private static func initialize(_ arguments: Arguments, _ path: String) async throws(CLIError) {
        _ = try arguments.exactly()
        guard let serverText = arguments.value("--server"), let server = URL(string: serverText),
              ["http", "https"].contains(server.scheme?.lowercased() ?? ""), server.host != nil else {
            throw .usage("init needs --server http(s)://HOST:PORT")
        }
        let token = try readToken(arguments)
        let storage = arguments.value("--storage").map { URL(fileURLWithPath: $0) } ?? ClientConfig.defaultStorage
        let config = ClientConfig(server: server, token: token, storage: storage)
        let tours = try await config.open() // local storage can be made, or init fails now
        if !arguments.has("--offline") {
            do {
                try await tours.checkServer()
            } catch .server(let status, let code, let message) where status == 401 || status == 403 {
                throw .refused("the server at \(server.absoluteString) refused the token (\(status) \(code): \(message)); nothing was saved: "
                               + "check the token (toursd tokens list, on the server) and run tours init again")
            } catch .transport(let reason) {
                throw .library(.transport("\(server.absoluteString): \(reason); nothing was saved (tours init --offline saves without asking the server)"))
            } catch {
                throw .library(.transport("\(server.absoluteString) did not answer as a NoughtyTours server: \(error); nothing was saved"))
            }
        }
        try config.save(path)
        Output.line("configured \(server.absoluteString)" + (arguments.has("--offline") ? " (not asked)" : ", which took the token")
                    + ", local storage in \(storage.path) (\(path))")
    }

    /// The token: from `--token-file` (`-` for standard input), or `--token`.
    private static func readToken(_ arguments: Arguments) throws(CLIError) -> String {
        switch (arguments.value("--token-file"), arguments.value("--token")) {
        case (let file?, nil):
            let data = file == "-" ? FileHandle.standardInput.readDataToEndOfFile() : FileManager.default.contents(atPath: file)
            guard let data else { throw .usage("cannot read the token file \(file)") }
            let token = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            guard !token.isEmpty else { throw .usage(file == "-" ? "no token on standard input" : "the token file \(file) is empty") }
            return token
        case (nil, let token?) where !token.isEmpty:
            return token
        case (_?, _?):
            throw .usage("init takes --token-file or --token, not both")
        default:
            throw .usage("init needs --token-file FILE (- for standard input) or --token TOKEN")
        }
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
        if !arguments.has("--yes") {
            guard isatty(STDIN_FILENO) == 1 else {
                throw .usage("property delete asks first, and standard input is not a terminal: add --yes to delete \(property.id) without asking")
            }
            FileHandle.standardOutput.write(Data("delete \(property.id) \"\(property.name)\" here, and on the server at the next sync? [y/N] ".utf8))
            guard ["y", "yes"].contains(readLine()?.trimmingCharacters(in: .whitespaces).lowercased() ?? "") else {
                return Output.line("kept \(property.id)")
            }
        }
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

    /// The property of an id, or `notFound` saying where it was looked for.
    static func find(_ tours: NoughtyTours, _ id: String) async throws(CLIError) -> Property {
        guard let property = try await library({ () async throws(NoughtyToursError) in try await tours.properties.property(id: id.lowercased()) }) else {
            throw .notFound("no property \(id) in local storage (tours property list shows them; tours property download \(id) brings one from the server)")
        }
        return property
    }

    /// The floor of a property by number (`--floor`, 0 by default), or `notFound` naming the
    /// floors there are.
    static func floor(_ tours: NoughtyTours, _ property: Property, _ arguments: Arguments) async throws(CLIError) -> Floor {
        let number = try arguments.integer("--floor", 0...199) ?? 0
        let floors = try await library { () async throws(NoughtyToursError) in try await tours.properties.floors(of: property) }
        guard let floor = floors.first(where: { $0.number == number }) else {
            throw .notFound("property \(property.id) (\(property.name)) has no floor \(number): its floors are "
                            + floors.map { "\($0.number ?? 0)" }.joined(separator: ", "))
        }
        return floor
    }

    /// The room of the property named by `id` or by its name (when one room has it), on the
    /// floor `--floor` names, else on whichever floor holds it; `notFound` naming where it was
    /// looked for and the rooms there are.
    static func room(_ tours: NoughtyTours, _ property: Property, _ id: String, _ arguments: Arguments) async throws(CLIError) -> Room {
        let floors = arguments.value("--floor") == nil
            ? try await library { () async throws(NoughtyToursError) in try await tours.properties.floors(of: property) }
            : [try await floor(tours, property, arguments)]
        var seen: [String] = []
        var named: [Room] = []
        for floor in floors {
            let rooms = try await library { () async throws(NoughtyToursError) in try await tours.properties.rooms(of: floor) }
            if let room = rooms.first(where: { $0.id == id.lowercased() }) { return room }
            named += rooms.filter { $0.name?.lowercased() == id.lowercased() }
            seen += rooms.map { "\($0.id) \($0.name ?? "(unnamed)") (floor \(floor.number ?? 0))" }
        }
        if named.count == 1 { return named[0] }
        if named.count > 1 { throw .usage("\(named.count) rooms are named \(id): give one's id (" + named.map(\.id).joined(separator: ", ") + ")") }
        let place = floors.count == 1 ? "floor \(floors[0].number ?? 0) of property \(property.id)" : "property \(property.id)"
        throw .notFound("no room \(id) on \(place): " + (seen.isEmpty ? "it has no rooms yet (tours plan gives a floor its rooms)" : "its rooms are " + seen.joined(separator: ", ")))
    }
}
