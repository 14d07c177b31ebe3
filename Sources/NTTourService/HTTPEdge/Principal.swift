/// Who an API request speaks for, as its bearer token says (`APIAuthentication`): the tenant's
/// own token, or a grant of the tenant's. A handler of an API route receives it as a value; it
/// never looks it up.
enum APIPrincipal: Sendable, Equatable {
    case tenant(Int64)
    case grant(GrantAccess)

    var tenant: Int64 {
        switch self {
        case .tenant(let tenant): tenant
        case .grant(let grant): grant.tenant
        }
    }

    /// The grant it is; nil for a tenant token.
    var grant: GrantAccess? {
        if case .grant(let grant) = self { grant } else { nil }
    }
}

/// An upload as its own resource names it, and the tenant it is of: what a request to
/// `/v1/uploads/{uploadId}` speaks for once its credential is checked (the tenant's token or a
/// grant holding the upload's property, or the upload's capability URL).
struct UploadTarget: Sendable, Equatable {
    let tenant: Int64
    let uploadId: String
}
