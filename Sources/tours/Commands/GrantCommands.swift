import NoughtyTours

/// `tours grant create`: a grant for a capture device, made with this station's tenant token
/// (docs/api.md "Grants and tokens"); its token is printed once, for the device's
/// `tours init --token-file -`.
enum GrantCommands {
    static func create(_ tours: NoughtyTours, _ arguments: Arguments) async throws(CLIError) {
        let properties = arguments.positional
        let scopes = arguments.values("--scope").isEmpty ? ["capture"] : arguments.values("--scope")
        let seconds = try lifetime(arguments.value("--expires") ?? "8h")
        let grant = try await library { () async throws(NoughtyToursError) in
            try await tours.createGrant(propertyIds: properties, scopes: scopes, expiresInSeconds: seconds)
        }
        if arguments.has("--json") {
            Output.json(["id": grant.id, "token": grant.token, "scopes": grant.scopes, "propertyIds": grant.propertyIds, "expiresAt": grant.expiresAt])
        } else {
            Output.line(grant.token)
            Output.error("grant \(grant.id): \(grant.scopes.joined(separator: ", ")) until \(grant.expiresAt); the token is shown only now")
        }
    }

    /// `8h`, `30m`, `90s`, `2d`: a lifetime in seconds.
    static func lifetime(_ text: String) throws(CLIError) -> Int {
        let units: [Character: Int] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
        guard let unit = text.last.flatMap({ units[$0] }), let count = Int(text.dropLast()), count > 0, count <= 365 * 86_400 / unit else {
            throw .usage("--expires takes a lifetime like 90s, 30m, 8h or 2d, not \"\(text)\"")
        }
        return count * unit
    }
}
