import NTHTTPCore
import NTServiceModel
import NTServiceStorage
import NTTourUseCases

/// The one thing of a tenant a request's command touches, for deciding whether a grant may
/// (docs/security.md "Who may call what"): the grant must hold the property it belongs to.
package enum AccessTarget: Sendable, Equatable {
    case property(String)
    case floor(String)
    case panorama(String)
    case tour(String)
    case upload(String)

    /// What the id names, for a 404's message.
    var noun: String {
        switch self {
        case .property: "property"
        case .floor: "floor"
        case .panorama: "panorama"
        case .tour: "tour"
        case .upload: "upload"
        }
    }

    var id: String {
        switch self {
        case .property(let id), .floor(let id), .panorama(let id), .tour(let id), .upload(let id): id
        }
    }

    /// The thing as the grants' store looks its property up.
    var stored: (GrantStore.Thing, String) {
        switch self {
        case .property(let id): (.property, id)
        case .floor(let id): (.floor, id)
        case .panorama(let id): (.panorama, id)
        case .tour(let id): (.tour, id)
        case .upload(let id): (.upload, id)
        }
    }
}

/// A request parsed once, from its head, into what it asks: access is decided on this value
/// (`GrantAuthorization`), and the handler executes the same value. Nothing is read twice
/// from the request, so no check can read one field and the use case another.
package protocol Command: Sendable {
    /// What a grant must hold for it; nil for a route about no one property (a list, the
    /// tenant's own settings).
    var target: AccessTarget? { get }
    /// What a grant must also hold when it exists (a panorama already stored under a
    /// creation's id).
    var targetIfStored: AccessTarget? { get }
}

extension Command {
    package var targetIfStored: AccessTarget? { nil }
}

/// A request that names one thing by its path (a GET or DELETE of it).
package struct Addressed: Command {
    package let target: AccessTarget?

    package var id: String { target?.id ?? "" }

    /// The parse of a route whose path names a `kind` in parameter `name`.
    package static func by(_ name: String, _ kind: @escaping @Sendable (String) -> AccessTarget) -> @Sendable (Request) throws -> Addressed {
        { request in Addressed(target: kind(try request.uuid(name))) }
    }

    /// The parse of a route that names nothing (a list, the tenant's own settings).
    package static let nothing: @Sendable (Request) throws -> Addressed = { _ in Addressed(target: nil) }
}
