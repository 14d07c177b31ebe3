import NTAPIModel
import NTServiceModel
import NTServiceStorage
import NTTourUseCases

/// A route's `Access` rule applied to the command of a request made with a grant (a tenant
/// token may use every route). A refusal is 404 where the grant cannot see the command's
/// target (its existence does not leak, as between tenants), else 403 naming what is missing.
package struct GrantAuthorization: Sendable {
    package let records: Records

    package init(records: Records) {
        self.records = records
    }

    func authorize(_ access: Access, _ command: some Command, _ grant: GrantAccess) async throws {
        switch access {
        case .anyCredential, .propertyList, .uploadCapability:
            return
        case .tenant:
            throw Self.tenantOnly(grant)
        case .tenantOnTarget:
            if let target = command.target { try await see(target, grant) }
            throw Self.tenantOnly(grant)
        case .scoped(let scope):
            if let target = command.target { try await see(target, grant) }
            try Self.require(scope, grant)
        case .propertyCreation:
            try Self.require(.capture, grant)
        case .panoramaCreation:
            try Self.require(.capture, grant)
            if let target = command.target { try await see(target, grant) }
            if let stored = command.targetIfStored, let property = try await property(of: stored, grant.tenant),
               !grant.propertyIds.contains(property) {
                throw ServiceError.notFound(stored.noun, stored.id)
            }
        }
    }

    /// The grant holds the property of `target`, or 404, as for a thing the tenant does not have.
    private func see(_ target: AccessTarget, _ grant: GrantAccess) async throws {
        guard let property = try await property(of: target, grant.tenant), grant.propertyIds.contains(property) else {
            throw ServiceError.notFound(target.noun, target.id)
        }
    }

    private func property(of target: AccessTarget, _ tenant: Int64) async throws -> String? {
        if case .property(let id) = target { return id }
        let (thing, id) = target.stored
        return try await records.readOne { try await GrantStore.propertyId($0, tenant, of: thing, id) }
    }

    private static func tenantOnly(_ grant: GrantAccess) -> ServiceError {
        ServiceError(.forbidden, "this needs a tenant token; a grant (\(names(grant.scopes))) cannot use it")
    }

    private static func require(_ scope: GrantScope, _ grant: GrantAccess) throws(ServiceError) {
        guard grant.has(scope) else {
            throw ServiceError(.forbidden, "this needs the \(scope.rawValue) scope; the grant has \(names(grant.scopes))")
        }
    }

    private static func names(_ scopes: [GrantScope]) -> String {
        scopes.map(\.rawValue).joined(separator: ", ")
    }
}
