/// What a grant lets its holder do (docs/security.md "Grants").
public enum GrantScope: String, Sendable, CaseIterable, Comparable {
    /// Create properties (each joins the grant) and, on the grant's properties, write floors,
    /// plans, world maps and panoramas and read them back.
    case capture
    /// Read the grant's properties and what they hold.
    case read

    public static func < (a: GrantScope, b: GrantScope) -> Bool { a.rawValue < b.rawValue }
}

/// The body of `POST /v1/grants`: `{"scopes": ["capture"|"read"…], "propertyIds": [id…],
/// "expiresInSeconds": N}`. A read-only grant names at least one property; a capture grant
/// may name none (it then works on the properties it creates).
public struct GrantInput: Equatable, Sendable {
    public var scopes: [GrantScope]
    public var propertyIds: [String]
    public var expiresInSeconds: Int

    public init(scopes: [GrantScope], propertyIds: [String], expiresInSeconds: Int) {
        self.scopes = scopes
        self.propertyIds = propertyIds
        self.expiresInSeconds = expiresInSeconds
    }

    public static func parse(_ bytes: [UInt8], allowed: ClosedRange<Int>, maxProperties: Int,
                             maxDepth: Int = JSONReader.defaultMaxDepth) throws(InvalidDocument) -> GrantInput {
        let json = try Fields.parse(bytes, maxDepth: maxDepth)
        var scopes: [GrantScope] = []
        for item in try json.array("scopes") {
            guard let text = item.string, let scope = GrantScope(rawValue: text) else {
                throw InvalidDocument("scopes holds \"capture\" or \"read\"")
            }
            if !scopes.contains(scope) { scopes.append(scope) }
        }
        var properties: [String] = []
        if let list = json["propertyIds"], !list.isNull {
            guard let items = list.array else { throw InvalidDocument("propertyIds must be an array of ids") }
            for item in items {
                let id = try Identifier.validated(item.string, "propertyIds")
                if !properties.contains(id) { properties.append(id) }
            }
        }
        let input = GrantInput(scopes: scopes.sorted(), propertyIds: properties, expiresInSeconds: try json.integer("expiresInSeconds"))
        guard !input.scopes.isEmpty else { throw InvalidDocument("scopes names at least one of \"capture\", \"read\"") }
        guard input.scopes.contains(.capture) || !input.propertyIds.isEmpty else { throw InvalidDocument("a read grant names its propertyIds") }
        guard input.propertyIds.count <= maxProperties else { throw InvalidDocument("propertyIds holds at most \(maxProperties) ids") }
        guard allowed.contains(input.expiresInSeconds) else {
            throw InvalidDocument("expiresInSeconds must be \(allowed.lowerBound) to \(allowed.upperBound)")
        }
        return input
    }
}

/// A grant as the API answers it; `token` only in the answer that made it (it is stored only
/// as a hash). `propertyIds` holds those it named and those its capture created.
public struct GrantDocument: JSONDocument, Equatable, Sendable {
    public var id: String
    public var token: String?
    public var scopes: [GrantScope]
    public var propertyIds: [String]
    public var createdAt: String
    public var expiresAt: String
    public var revokedAt: String?

    public init(id: String, token: String?, scopes: [GrantScope], propertyIds: [String], createdAt: String, expiresAt: String, revokedAt: String?) {
        (self.id, self.token, self.scopes, self.propertyIds) = (id, token, scopes, propertyIds)
        (self.createdAt, self.expiresAt, self.revokedAt) = (createdAt, expiresAt, revokedAt)
    }

    public init(_ value: JSONValue) throws(InvalidDocument) {
        let json = try Fields(value, context: "grant")
        var scopes: [GrantScope] = []
        for item in try json.array("scopes") {
            guard let scope = item.string.flatMap(GrantScope.init(rawValue:)) else { throw InvalidDocument("a grant's scope is capture or read") }
            scopes.append(scope)
        }
        var properties: [String] = []
        for item in try json.array("propertyIds") {
            guard let id = item.string else { throw InvalidDocument("propertyIds must be an array of ids") }
            properties.append(id)
        }
        self.init(id: try json.string("id"), token: try json.optionalString("token"), scopes: scopes, propertyIds: properties,
                  createdAt: try json.string("createdAt"), expiresAt: try json.string("expiresAt"), revokedAt: try json.optionalString("revokedAt"))
    }

    public func write(to writer: inout JSONWriter) {
        writer.object { writer in
            writer.key("createdAt"); writer.string(createdAt)
            writer.key("expiresAt"); writer.string(expiresAt)
            writer.key("id"); writer.string(id)
            writer.key("propertyIds"); writer.array(propertyIds) { $0.string($1) }
            writer.key("revokedAt"); writer.string(revokedAt)
            writer.key("scopes"); writer.array(scopes) { $0.string($1.rawValue) }
            if let token { writer.key("token"); writer.string(token) }
        }
    }
}

/// A tenant token as `/v1/tokens` answers it; `token` only in the answer that made it.
public struct TokenDocument: JSONDocument, Equatable, Sendable {
    public var id: String
    public var token: String?
    public var createdAt: String
    public var revokedAt: String?

    public init(id: String, token: String?, createdAt: String, revokedAt: String?) {
        (self.id, self.token, self.createdAt, self.revokedAt) = (id, token, createdAt, revokedAt)
    }

    public init(_ value: JSONValue) throws(InvalidDocument) {
        let json = try Fields(value, context: "token")
        self.init(id: try json.string("id"), token: try json.optionalString("token"), createdAt: try json.string("createdAt"),
                  revokedAt: try json.optionalString("revokedAt"))
    }

    public func write(to writer: inout JSONWriter) {
        writer.object { writer in
            writer.key("createdAt"); writer.string(createdAt)
            writer.key("id"); writer.string(id)
            writer.key("revokedAt"); writer.string(revokedAt)
            if let token { writer.key("token"); writer.string(token) }
        }
    }
}

/// `{"items": [...], "next": cursor|null}`: a page of a list (grants, tokens, a tour's share
/// links), `next` the cursor of the next page (`?after=`), nil on the last.
public struct Page<Item: JSONDocument & Sendable>: JSONDocument, Sendable {
    public var items: [Item]
    public var next: String?

    public init(items: [Item], next: String?) {
        self.items = items
        self.next = next
    }

    public func write(to writer: inout JSONWriter) {
        writer.object { writer in
            writer.key("items"); writer.array(items) { writer, item in item.write(to: &writer) }
            writer.key("next"); writer.string(next)
        }
    }
}
