import NTServiceModel
import NTSQLKit

/// Which deployment a blob store belongs to: the one rule, for the folder and the bucket alike,
/// that decides whether stored objects may ever be removed as orphans. A deployment is a
/// database: its first start gives it an id (`DeploymentStore`), and the store keeps the id of
/// the deployment that claimed it (`deployment.id` in the blob folder, or under the bucket's
/// prefix). Only a database whose id the store holds removes anything from it; nothing is
/// inferred from the database's tokens or rows being few. Pure.
package enum StoreOwnership: Equatable {
    /// The store is this deployment's.
    case owned
    /// The store holds no claim and this deployment may write its own: the store is empty,
    /// or it holds blobs this database names (one from before claims, or filled by
    /// `toursd blobs copy`).
    case claim
    /// Another deployment's store, or blobs no row of this database names: nothing may be
    /// removed, and toursd does not start on it.
    case refused(String)

    /// `database`: this database's id; `store`: the claim the store holds; `holdsBlobs`:
    /// whether it holds blobs of toursd's; `databaseNamesSome`: whether this database's rows
    /// name any of those it was asked about.
    package static func decide(database: String, store: String?, holdsBlobs: Bool, databaseNamesSome: Bool,
                       describing place: String, databaseName: String) -> StoreOwnership {
        if let store {
            guard store != database else { return .owned }
            return .refused("\(place) belongs to deployment \(store), and the database (\(databaseName)) is deployment \(database): the stored files "
                            + "are not its. A database restored from a backup is a deployment of its own until told otherwise: when it replaces "
                            + "deployment \(store) (whose daemons are stopped for good), run `toursd deployment adopt` with this configuration. "
                            + "Otherwise the database that goes with them is missing: restore it (or point dataDir or databaseUrl at it) and start "
                            + "again; to start afresh instead, use another blob folder or bucket prefix. Nothing was removed.")
        }
        if !holdsBlobs || databaseNamesSome { return .claim }
        return .refused("the database (\(databaseName)) names none of the stored files in \(place): the database that goes with them is "
                        + "missing. Restore it (or point dataDir or databaseUrl at it) and start again; to start afresh instead, move "
                        + "\(place) aside. Nothing was removed.")
    }

    /// The name of the claim in the store (the folder's root, or the bucket's prefix): not a
    /// name of a blob, so no sweep ever takes it for one.
    package static let claimName = "deployment.id"
}

/// The database's deployment id (migration 0014 / PostgreSQL 0011): made once, by the first
/// start of any daemon on it (daemons starting together agree on the first). A backup of a
/// store others share carries none, so a restore is a deployment of its own until `adopt`.
/// And the check of the deployment's webhook key (0023 / 0020), recorded by its first daemon.
package enum DeploymentStore {
    package static func id(_ db: any SQLConnection, proposing fresh: String) async throws -> String {
        try await db.run("INSERT INTO deployment (singleton, id) VALUES (1, ?) ON CONFLICT DO NOTHING", fresh)
        guard let id = try await db.first("SELECT id FROM deployment WHERE singleton = 1")?.decode("id", as: String.self) else {
            throw StorageError(.failed, "the database's deployment id cannot be read")
        }
        return id
    }

    /// This database becomes deployment `id` (`toursd deployment adopt`: a restore that
    /// replaces the deployment whose store holds that id); returns the id it had.
    package static func adopt(_ db: any SQLConnection, id: String) async throws -> String? {
        let before = try await db.first("SELECT id FROM deployment WHERE singleton = 1")?.decode("id", as: String.self)
        try await db.run("INSERT INTO deployment (singleton, id) VALUES (1, ?) ON CONFLICT (singleton) DO UPDATE SET id = excluded.id", id)
        return before
    }

    /// The deployment's key check: `check` recorded when none is yet (the first daemon), and
    /// the one recorded returned.
    package static func keyCheck(_ db: any SQLConnection, recording check: String) async throws -> String {
        try await db.run("UPDATE deployment SET key_check = ? WHERE singleton = 1 AND key_check IS NULL", check)
        guard let recorded = try await db.first("SELECT key_check FROM deployment WHERE singleton = 1")?.decodeIfPresent("key_check", as: String.self) else {
            throw StorageError(.failed, "the deployment's key check cannot be read")
        }
        return recorded
    }

    /// `check` becomes the deployment's (`toursd deployment set-key`, after a key was lost).
    package static func setKeyCheck(_ db: any SQLConnection, _ check: String) async throws {
        try await db.run("UPDATE deployment SET key_check = ? WHERE singleton = 1", check)
    }

    /// A backup's copy of the database carries no deployment (it is restored as one of its own).
    static func forget(_ db: any SQLConnection) async throws {
        try await db.run("DELETE FROM deployment")
    }
}
