import Foundation
import NTObjectStorage
import NTPostgresDB
import NTServiceHTTP
import NTServiceModel
import NTServiceStorage
import NTTourUseCases
import NTUploads
import NTWebhooks

/// `toursd backup DEST` with PostgreSQL and a bucket: `toursd.dump` (pg_dump's custom format)
/// and `blobs.manifest` (BucketBackup's: the objects the rows name, each checked to be in the
/// bucket) of one snapshot, exported from a transaction of this command's and given to
/// pg_dump; and the webhook key the rows' secrets are sealed under. docs/scale-out.md
/// "Backup and restore" says how they go back.
enum PostgresBackup {
    static func run(url: String, to destination: String, bucket: BucketTransfer, webhookKey: String) throws(StartupError) -> Int {
        try BucketBackup.prepare(destination)
        let written = ["toursd.dump", BucketBackup.manifestName, WebhookKey.fileName].map { destination + "/" + $0 }
        do {
            let connection = try PostgresConnection(url: url)
            try connection.execute("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            guard let snapshot = try connection.first("SELECT pg_export_snapshot() AS id")?.decode("id", as: String.self) else {
                throw StartupError("PostgreSQL gave no snapshot to back up")
            }
            let entries = try BucketBackup.entries(try BucketBackup.naming.map { try connection.query($0) })
            for entry in entries { try BucketBackup.check(entry, in: bucket) }
            try dump(url: url, snapshot: snapshot, into: written[0])
            try PrivateFile.write(written[1], line: String(BucketBackup.manifest(entries).dropLast()))
            try BucketBackup.copyPrivate(webhookKey, to: written[2])
            try connection.execute("COMMIT")
            return entries.count
        } catch {
            // A backup is whole or not there: nothing of a failed one is left to be taken for it.
            for path in written { unlink(path) }
            throw (error as? StartupError) ?? StartupError("the backup failed: \(error)")
        }
    }

    /// pg_dump of the snapshot `snapshot` (the rows the manifest was read from). The password
    /// travels in its environment, not on its command line, which every user can read.
    private static func dump(url: String, snapshot: String, into file: String) throws(StartupError) {
        guard var address = URLComponents(string: url) else { throw StartupError("databaseUrl is not a URL") }
        var environment = ProcessInfo.processInfo.environment
        if let password = address.password { environment["PGPASSWORD"] = password }
        address.password = nil
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        // Without the deployment's identity: restored, the dump is a deployment of its own until
        // `toursd deployment adopt` (beside the live one, it must not own the live one's bucket).
        process.arguments = ["pg_dump", "--format=custom", "--no-owner", "--exclude-table-data=deployment", "--snapshot=\(snapshot)",
                             "--file=\(file)", address.string ?? url]
        process.environment = environment
        let errors = Pipe()
        process.standardError = errors
        do {
            try process.run()
        } catch {
            throw StartupError("pg_dump cannot be run (PostgreSQL's client tools, of the server's version or newer, must be in PATH): \(error)")
        }
        let said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw StartupError("pg_dump failed (\(process.terminationStatus)): \(said.trimmingCharacters(in: .whitespacesAndNewlines))")
        }
        guard chmod(file, 0o600) == 0 else { throw StartupError("cannot make \(file) private") }
    }
}
