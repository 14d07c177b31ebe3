import NTAPIModel
import NTServiceModel
import NTServiceStorage
import NTTourUseCases

/// Who may use an API route (docs/security.md "Who may call what"). Every `/v1` route is added
/// with one (`APIRoutes`); a tenant token may use every route, a grant what its rule says of
/// the command's target, an upload's capability URL only that upload's HEAD, PATCH and DELETE.
package enum Access: Sendable, Equatable {
    /// A tenant token only (403 for a grant).
    case tenant
    /// A tenant token only; a grant gets 404 where it cannot see the command's target, 403
    /// where it can.
    case tenantOnTarget
    /// Any credential, a grant of either scope (discovery: `OPTIONS`).
    case anyCredential
    /// A grant with the scope on the command's target: 404 when it cannot see it, 403 when it
    /// can but lacks the scope.
    case scoped(GrantScope)
    /// The property list: a grant sees the properties it holds.
    case propertyList
    /// `PUT /v1/properties/{propertyId}`: capture; a property it creates joins its grant, one
    /// that exists must be the grant's (checked in the write's transaction).
    case propertyCreation
    /// A panorama's creation (one-shot, tus, the draft): capture on the floor it goes on, and
    /// on a panorama already stored under its id, both read from the creation as parsed once
    /// (`PanoramaCreation`), the value the use case then executes.
    case panoramaCreation
    /// `/v1/uploads/{uploadId}/{capability}`: the URL is the credential (`UploadCapabilities`).
    case uploadCapability

    /// The rule's name in docs/security.md's table.
    var name: String {
        switch self {
        case .tenant: "tenant"
        case .tenantOnTarget: "tenant on property"
        case .anyCredential: "any"
        case .scoped(let scope): scope.rawValue
        case .propertyList: "list"
        case .propertyCreation, .panoramaCreation: "capture"
        case .uploadCapability: "upload"
        }
    }
}

/// A route and its rule, as `APIRoutes` recorded them (tests and docs read the list).
package struct RouteRule: Sendable, Equatable {
    package let method: String
    package let pattern: String
    package let access: Access

    package init(method: String, pattern: String, access: Access) {
        self.method = method
        self.pattern = pattern
        self.access = access
    }
}
