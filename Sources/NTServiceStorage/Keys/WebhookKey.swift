import Foundation
import NTHashing
import NTServiceModel
#if canImport(Glibc)
import Glibc
#endif

/// The key webhook secrets are sealed under, kept outside the database: a dump or a copy of
/// the database alone does not give away the secrets receivers trust. A receiver's secret
/// cannot be stored hashed: the daemon needs it to sign each delivery.
package enum WebhookKey {
    package static let fileName = "webhook.key"

    /// `webhookKeyFile`, else beside the blobs several daemons share (`blobDir`), else in the
    /// data directory.
    package static func path(_ settings: StorageSettings) -> String {
        if !settings.webhookKeyFile.isEmpty { return settings.webhookKeyFile }
        return settings.blobDir.isEmpty ? settings.dataDir + "/" + fileName : settings.blobDir + "/." + fileName
    }

    /// Several daemons on one database open each other's sealed secrets and resume each
    /// other's uploads (their URLs are signed under this key): with PostgreSQL the key is a
    /// file every daemon reads (`webhookKeyFile`, or beside a shared `blobDir`), or the start
    /// is refused. (Each daemon making its own under its `dataDir` broke both, silently.)
    /// `spansDaemons`: the deployment's database is one several daemons may share.
    package static func checkShared(_ settings: StorageSettings, spansDaemons: Bool) throws(StartupError) {
        guard spansDaemons, settings.webhookKeyFile.isEmpty, settings.blobDir.isEmpty else { return }
        throw StartupError("with PostgreSQL (databaseUrl) every daemon reads one webhook key: it seals the webhook endpoints' secrets and signs "
                           + "upload URLs, so that an upload begun on one daemon resumes on another. Set webhookKeyFile to a file every daemon "
                           + "reads, the same 32 bytes (head -c 32 /dev/urandom > webhook.key; chmod 600), as config/toursd-scale-out.json does")
    }

    /// What the database keeps of the key (`DeploymentStore.keyCheck`): an HMAC of a fixed text
    /// under it, which tells two keys apart and gives neither away.
    package static func check(_ key: SecretBox) -> String {
        ByteEncoding.hex(key.derivedKey("toursd deployment key check v1"))
    }

    /// The key, made on a first start (32 random bytes, 0600, durable before it is used). It
    /// appears whole: written aside, then linked into place, so that daemons starting together
    /// agree on the first one linked.
    package static func load(_ settings: StorageSettings, spansDaemons: Bool) throws(StartupError) -> SecretBox {
        try checkShared(settings, spansDaemons: spansDaemons)
        let path = path(settings)
        if FileManager.default.fileExists(atPath: path) { return try read(path) }
        // With a bucket nothing else makes blobDir, where several daemons may keep their key.
        try StartupError.makeDirectories((path as NSString).deletingLastPathComponent)
        let aside = path + ".new-" + ByteEncoding.hex(randomBytes(6))
        defer { unlink(aside) }
        let fd = open(aside, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw StartupError("cannot make the webhook key \(path): \(String(cString: strerror(errno)))") }
        let key = randomBytes(SecretBox.keyBytes)
        let written = key.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        let synced = fsync(fd) == 0
        close(fd)
        guard written == key.count, synced else { throw StartupError("cannot write the webhook key \(path)") }
        if link(aside, path) != 0 {
            guard errno == EEXIST else { throw StartupError("cannot make the webhook key \(path): \(String(cString: strerror(errno)))") }
            return try read(path)
        }
        let directory = open((path as NSString).deletingLastPathComponent, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directory >= 0 {
            fsync(directory)
            close(directory)
        }
        return SecretBox(key: key)!
    }

    /// The key as `load` would find it, made by nobody: one that exists must be whole.
    package static func checkExisting(_ settings: StorageSettings) throws(StartupError) {
        let path = path(settings)
        if FileManager.default.fileExists(atPath: path) { _ = try read(path) }
    }

    private static func read(_ path: String) throws(StartupError) -> SecretBox {
        guard let data = FileManager.default.contents(atPath: path), let box = SecretBox(key: Array(data)) else {
            throw StartupError("the webhook key \(path) is not \(SecretBox.keyBytes) bytes: restore it, or remove it (then every endpoint needs a new secret)")
        }
        return box
    }
}
