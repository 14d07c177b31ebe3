import NTAPIModel

/// Where a route's property is found: the path parameter of that name, and what it names.
enum PropertyPlace: String, Sendable, CaseIterable {
    case property = "propertyId"
    case floor = "floorId"
    case panorama = "panoramaId"
    case tour = "tourId"
    case upload = "uploadId"

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
}

/// Who may use a route (docs/security.md "Who may call what"). Every `/v1` route is added with
/// one (`GuardedRoutes`); a tenant token may use every route, a grant what its rule says, an
/// upload's capability URL only that upload's HEAD, PATCH and DELETE.
enum Access: Sendable, Equatable {
    /// A tenant token only: a grant gets 404 where the route names a property it cannot see
    /// (`place`), else 403.
    case tenant(PropertyPlace?)
    /// Any credential, a grant of either scope (discovery: `OPTIONS`).
    case anyCredential
    /// A grant with `scope` on the property of `place`: 404 when it cannot see that property,
    /// 403 when it can but lacks the scope.
    case scoped(GrantScope, PropertyPlace)
    /// The property list: a grant sees the properties it holds.
    case propertyList
    /// `PUT /v1/properties/{propertyId}`: capture; a property it creates joins its grant, one
    /// that exists must be the grant's (checked in the write's transaction).
    case propertyCreation
    /// A panorama's creation (one-shot, tus, the draft): capture on the floor it goes on, and a
    /// panorama already stored under its id must be on the grant's properties too; both read
    /// from the creation as parsed once (`PanoramaCreation`), the value the use case executes.
    case panoramaCreation
    /// `/v1/uploads/{uploadId}/{capability}`: the URL is the credential (`UploadCapability`).
    case uploadCapability

    /// The rule's name in docs/security.md's table.
    var name: String {
        switch self {
        case .tenant(nil): "tenant"
        case .tenant: "tenant on property"
        case .anyCredential: "any"
        case .scoped(let scope, _): scope.rawValue
        case .propertyList: "list"
        case .propertyCreation, .panoramaCreation: "capture"
        case .uploadCapability: "upload"
        }
    }
}

/// A route and its rule, as `GuardedRoutes` recorded them (tests and docs read the list).
struct RouteRule: Sendable, Equatable {
    let method: String
    let pattern: String
    let access: Access
}
