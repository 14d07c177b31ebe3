import NTServiceModel
import NTServiceStorage
import NTTourUseCases

/// Who an API request speaks for, as its bearer token says (`APIAuthentication`): the tenant's
/// own token, or a grant of the tenant's. A handler of an API route receives it as a value; it
/// never looks it up.
package enum APIPrincipal: Sendable, Equatable {
    case tenant(Int64)
    case grant(GrantAccess)

    package var tenant: Int64 {
        switch self {
        case .tenant(let tenant): tenant
        case .grant(let grant): grant.tenant
        }
    }

    /// The grant it is; nil for a tenant token.
    package var grant: GrantAccess? {
        if case .grant(let grant) = self { grant } else { nil }
    }
}

/// An upload as its own resource names it, and the tenant it is of: what a request to
/// `/v1/uploads/{uploadId}` speaks for once its credential is checked (the tenant's token or a
/// grant holding the upload's property, or the upload's capability URL).
package struct UploadTarget: Sendable, Equatable {
    package let tenant: Int64
    package let uploadId: String

    package init(tenant: Int64, uploadId: String) {
        self.tenant = tenant
        self.uploadId = uploadId
    }
}
