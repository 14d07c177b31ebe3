/// What `toursd`'s command line asks for. Parsing is pure, so tests call it directly.
public enum ToursdCommand: Equatable, Sendable {
    case serve(ToursdConfig)
    /// `status`: list the migrations, applied or pending, and apply none.
    case migrate(ToursdConfig, status: Bool)
    /// A consistent copy of the data directory into a new folder, while the daemon serves.
    case backup(ToursdConfig, destination: String)
    /// The blobs between the blob folder and a bucket, each digest checked.
    case copyBlobs(ToursdConfig, BlobCopyDirection)
    case createToken(ToursdConfig, tenant: String)
    case listTokens(ToursdConfig)
    case revokeToken(ToursdConfig, id: Int64)
    /// Prints the effective configuration, and whether it can be served.
    case checkConfig(ToursdConfig, ConfigCheck)
    /// Tells the database which deployment it is, or which key its daemons read.
    case deployment(ToursdConfig, DeploymentChoice)
    case help(String)
    /// `--version` (or `version`): the release.
    case version

    /// Where a key's value comes from, last wins: the defaults, the file (`--config`, else
    /// `$TOURSD_CONFIG`), the environment (`TOURSD_` + the key, e.g. `TOURSD_logLevel`), then
    /// the flags.
    public static let environmentPrefix = "TOURSD_"

    static let commonOptions = """
      --config PATH    JSON configuration file (keys as in config/toursd.json); else
                       $TOURSD_CONFIG. Any key can also be set as TOURSD_<key> in the
                       environment (over the file, under the flags)
      --data-dir DIR   where data is kept (overrides the file)
      --help           this text
    """

    public static let usage = """
    usage: toursd [serve] [--config PATH] [--host ADDR] [--port N] [--data-dir DIR]
           toursd migrate [--status] [--migrations-dir DIR] [--config PATH] [--data-dir DIR]
           toursd tokens create --tenant NAME | list | revoke ID [--config PATH] [--data-dir DIR]
           toursd backup DEST [--config PATH] [--data-dir DIR]
           toursd blobs copy --to s3://BUCKET/PREFIX | --from s3://BUCKET/PREFIX [--config PATH] [--data-dir DIR]
           toursd check-config [--config PATH] [--host ADDR] [--port N] [--data-dir DIR] [--no-bind]
           toursd deployment adopt | set-key [--config PATH] [--data-dir DIR]

    The NoughtyTours sync backend.

    subcommands:
      serve    run the HTTP server in the foreground (the default)
      migrate  bring the database to the newest schema (serve does this too)
      tokens   create, list or revoke the bearer tokens of tenants
      backup   copy the data directory, consistently, while the daemon serves
      blobs    copy the blob folder's blobs into an S3 bucket, each digest checked
      check-config  print the effective configuration and check it can be served
      deployment  make a restored database the deployment its blob store belongs to, or
               record the webhook key its daemons now read
      version  the release (also --version)

    Each subcommand explains itself with --help.
    """

    static let serveUsage = """
    usage: toursd [serve] [--config PATH] [--host ADDR] [--port N] [--data-dir DIR]

    Runs the HTTP server in the foreground. On start it checks it can listen, migrates the
    database, removes files left by an interrupted write (never those a new or another
    database cannot account for: then it refuses to start), creates tenant "default" with its token in
    <data-dir>/admin.token if there is no token yet, and prints
    "listening on http://ADDR:PORT" on stderr. SIGTERM or SIGINT stop it gracefully; SIGHUP
    reloads the configuration (log level, connection limit, timeouts) and reopens logFile.

    options:
      --host ADDR      address to listen on, IPv4 or IPv6 (overrides the file)
      --port N         port to listen on; 0 lets the OS pick (overrides the file)
    \(commonOptions)
    """

    static let migrateUsage = """
    usage: toursd migrate [--status] [--migrations-dir DIR] [--config PATH] [--data-dir DIR]

    Applies the pending migrations, each in its own transaction: the ones built into toursd,
    or those of a folder. A failing migration leaves the database as it was and names its file.

    options:
      --status              list each migration, applied (with its time) or pending; apply none
      --migrations-dir DIR  apply the NNNN_name.sql files of DIR instead (sets migrationsDir)
    \(commonOptions)
    """

    static let backupUsage = """
    usage: toursd backup DEST [--config PATH] [--data-dir DIR]

    Copies the data directory into DEST (a new or empty folder) while toursd serves it, uploads
    going on: the database through SQLite's online backup (one snapshot), and the files its rows
    name (hard links where DEST is on the same file system: stored files never change; copies
    otherwise, and for resumable uploads in progress). `toursd serve --data-dir DEST` starts on
    it: every row has its file, and everything acknowledged before the backup began is there.
    To restore: stop toursd, move the data directory aside, put DEST in its place (or point
    dataDir at it), start toursd.
    With PostgreSQL and a bucket: DEST gets toursd.dump (pg_dump, which must be in PATH),
    blobs.manifest and webhook.key, of one snapshot; docs/scale-out.md "Backup and restore"
    says how they go back.

    options:
    \(commonOptions)
    """

    static let blobsUsage = """
    usage: toursd blobs copy --to s3://BUCKET/PREFIX [--config PATH] [--data-dir DIR]
           toursd blobs copy --from s3://BUCKET/PREFIX [--config PATH] [--data-dir DIR]

    Copies every blob the database names (panoramas, world maps, the acknowledged bytes of
    unfinished uploads) between the blob folder (blobDir, else DATA_DIR/blobs) and the bucket,
    in the layout blobStore "s3://BUCKET/PREFIX" reads. --to: each file is checked against its
    row's digest before it goes, its request signed with it, and the object read back and
    checked again. --from: each object is checked against its row's digest and made durable
    before it takes its name in the folder. A blob there with the same bytes already is left
    alone. The bucket's endpoint, region and credentials come as for serve (AWS_* variables,
    else s3Endpoint and s3Region). Exits 1 naming every blob it could not copy. To move a
    deployment either way: run it while the daemons serve, stop them, run it again (it copies
    only what came meanwhile), set blobStore, start them.

    options:
      --to s3://BUCKET/PREFIX    from the blob folder into the bucket (and prefix)
      --from s3://BUCKET/PREFIX  from the bucket (and prefix) into the blob folder
    \(commonOptions)
    """

    static let checkUsage = """
    usage: toursd check-config [--config PATH] [--host ADDR] [--port N] [--data-dir DIR] [--no-bind]

    Prints every key's effective value and where it came from (default, file, environment,
    command line), and tries what serve will do: reads the migrations, makes the data
    directory, reaches the database as its role (and that the role may make toursd's tables),
    puts and deletes a probe object in the bucket with the endpoint and credentials serve
    would use, and binds the address (then lets it go; --no-bind leaves that out, to check a
    file beside a running daemon). Exits 0 when it can be served, 1 when not, 2 for a
    configuration mistake.

    options:
    \(commonOptions)
    """

    static let tokensUsage = """
    usage: toursd tokens create --tenant NAME [--config PATH] [--data-dir DIR]
           toursd tokens list [--config PATH] [--data-dir DIR]
           toursd tokens revoke ID [--config PATH] [--data-dir DIR]

    create prints a new token as the last line of stdout, once: only its hash is kept.
    list shows id, tenant, creation time and state. revoke ID stops a token at once.

    options:
      --tenant NAME    the tenant of a new token (created when missing)
    \(commonOptions)
    """

    static let deploymentUsage = """
    usage: toursd deployment adopt [--config PATH] [--data-dir DIR]
           toursd deployment set-key [--config PATH] [--data-dir DIR]

    adopt: the database becomes the deployment whose claim the blob store (blobDir, or the
    bucket of blobStore) holds. A database restored from a backup of a shared store is a
    deployment of its own until then, and toursd does not start on that store: run adopt when
    the restore replaces the deployment (its daemons stopped for good); its daemons may then
    remove objects its rows do not name. To serve a copy beside the live one, give the copy a
    store of its own instead (toursd blobs copy).
    set-key: the webhook key at webhookKeyFile (made when missing) becomes the one this
    deployment's daemons must read, after the one they read was lost. Every webhook endpoint
    then needs a new secret, and every unfinished upload its creation again.

    options:
    \(commonOptions)
    """

    /// Parses the arguments after the program name. `loadFile` reads a config file into a
    /// configuration (injected so tests need no files).
    public static func parse(_ arguments: [String], environment: [String: String] = [:],
                             loadFile: (String, inout ToursdConfig) throws(ConfigError) -> Void = { path, config throws(ConfigError) in try config.apply(file: path) })
        throws(ConfigError) -> ToursdCommand {
        var rest = arguments[...]
        var words: [String] = []
        while let first = rest.first, !first.hasPrefix("-") {
            words.append(first)
            rest = rest.dropFirst()
        }
        if words.first == "version" || (words.isEmpty && rest.first == "--version") { return .version }
        let subcommand = words.first ?? "serve"
        let help: String
        let allowed: Set<String>
        switch subcommand {
        case "serve": (help, allowed) = (serveUsage, ["--config", "--data-dir", "--host", "--port"])
        case "check-config": (help, allowed) = (checkUsage, ["--config", "--data-dir", "--host", "--port", "--no-bind"])
        case "migrate": (help, allowed) = (migrateUsage, ["--config", "--data-dir", "--migrations-dir", "--status"])
        case "tokens": (help, allowed) = (tokensUsage, ["--config", "--data-dir", "--tenant"])
        case "backup": (help, allowed) = (backupUsage, ["--config", "--data-dir"])
        case "blobs": (help, allowed) = (blobsUsage, ["--config", "--data-dir", "--to", "--from"])
        case "deployment": (help, allowed) = (deploymentUsage, ["--config", "--data-dir"])
        default: throw ConfigError("unknown subcommand \"\(subcommand)\"; see toursd --help")
        }
        var configPath: String?
        var overrides: [(key: String, value: String)] = []
        var tenant: String?
        var target: String?
        var source: String?
        var status = false
        var bind = true
        while let flag = rest.popFirst() {
            if flag == "--help" || flag == "-h" { return .help(words.isEmpty ? usage : help) }
            guard allowed.contains(flag) else { throw ConfigError("unknown option \(flag) for \(subcommand); see toursd \(subcommand) --help") }
            if flag == "--status" || flag == "--no-bind" {
                if flag == "--status" { status = true } else { bind = false }
                continue
            }
            guard let value = rest.popFirst() else { throw ConfigError("\(flag) needs a value") }
            switch flag {
            case "--config": configPath = value
            case "--tenant": tenant = value
            case "--to": target = value
            case "--from": source = value
            case "--host": overrides.append(("host", value))
            case "--port": overrides.append(("port", value))
            case "--migrations-dir": overrides.append(("migrationsDir", value))
            default: overrides.append(("dataDir", value))
            }
        }
        var config = ToursdConfig()
        // Where each key's value came from (check-config says it beside the value).
        var sources: [String: String] = [:]
        if let path = configPath ?? environment[environmentPrefix + "CONFIG"] {
            let before = config.values
            try loadFile(path, &config)
            for (old, new) in zip(before, config.values) where old.value != new.value { sources[new.key] = "file \(path)" }
        }
        for key in ToursdConfig.keys {
            guard let value = environment[environmentPrefix + key] else { continue }
            do throws(ConfigError) {
                try config.set(key, value)
            } catch {
                throw ConfigError("\(environmentPrefix)\(key): \(error.message)")
            }
            sources[key] = environmentPrefix + key
        }
        for (key, value) in overrides {
            try config.set(key, value)
            sources[key] = "the command line"
        }
        try config.checkRelations()
        let arguments = Array(words.dropFirst())
        switch (subcommand, arguments.first) {
        case ("serve", nil): return .serve(config)
        case ("check-config", nil): return .checkConfig(config, ConfigCheck(bind: bind, sources: sources))
        case ("migrate", nil): return .migrate(config, status: status)
        case ("backup", let destination?):
            guard arguments.count == 1, !destination.isEmpty else { throw ConfigError("backup takes one argument: the folder to copy into") }
            return .backup(config, destination: destination)
        case ("backup", nil): throw ConfigError("backup needs the folder to copy into: toursd backup DEST")
        case ("blobs", "copy"):
            guard arguments.count == 1 else { throw ConfigError("blobs copy takes no argument; the bucket goes in --to or --from") }
            switch (target, source) {
            case (let bucket?, nil) where bucket.hasPrefix("s3://"): return .copyBlobs(config, .intoBucket(bucket))
            case (nil, let bucket?) where bucket.hasPrefix("s3://"): return .copyBlobs(config, .intoFolder(bucket))
            case (_?, _?): throw ConfigError("blobs copy takes one of --to and --from, not both")
            default: throw ConfigError("blobs copy needs --to s3://BUCKET/PREFIX (into the bucket) or --from s3://BUCKET/PREFIX (into the blob folder)")
            }
        case ("blobs", let other):
            throw ConfigError(other.map { "unknown blobs command \"\($0)\"" } ?? "blobs needs copy")
        case ("tokens", "create"):
            guard arguments.count == 1 else { throw ConfigError("tokens create takes no argument; the tenant goes in --tenant") }
            guard let tenant else { throw ConfigError("tokens create needs --tenant NAME") }
            return .createToken(config, tenant: tenant)
        case ("tokens", "list"):
            guard arguments.count == 1 else { throw ConfigError("tokens list takes no argument") }
            return .listTokens(config)
        case ("tokens", "revoke"):
            guard arguments.count == 2, let id = Int64(arguments[1]) else { throw ConfigError("tokens revoke needs the id of a token") }
            return .revokeToken(config, id: id)
        case ("deployment", let word?) where arguments.count == 1:
            guard let choice = DeploymentChoice(rawValue: word) else { throw ConfigError("unknown deployment command \"\(word)\"; see toursd deployment --help") }
            return .deployment(config, choice)
        case ("deployment", _):
            throw ConfigError("deployment needs adopt or set-key, and nothing after it")
        case ("tokens", let other):
            throw ConfigError(other.map { "unknown tokens command \"\($0)\"" } ?? "tokens needs create, list or revoke")
        default:
            throw ConfigError("\(subcommand) takes no argument \"\(arguments.first ?? "")\"")
        }
    }
}

/// Which way `toursd blobs copy` goes, with the bucket (`s3://BUCKET/PREFIX`).
public enum BlobCopyDirection: Equatable, Sendable {
    /// `--to`: from the blob folder into the bucket.
    case intoBucket(String)
    /// `--from`: from the bucket into the blob folder.
    case intoFolder(String)

    public var bucket: String {
        switch self {
        case .intoBucket(let bucket), .intoFolder(let bucket): bucket
        }
    }
}

/// What `toursd deployment` records in the database.
public enum DeploymentChoice: String, Equatable, Sendable {
    /// This database is the deployment its blob store's claim names.
    case adopt
    /// The webhook key this daemon reads is the deployment's.
    case setKey = "set-key"
}

/// What check-config is asked besides the configuration: whether to bind the address (not
/// beside a running daemon, which holds it), and where each key's value came from (a key not
/// named kept its default).
public struct ConfigCheck: Sendable, Equatable {
    public var bind: Bool
    public var sources: [String: String]

    public init(bind: Bool = true, sources: [String: String] = [:]) {
        self.bind = bind
        self.sources = sources
    }
}
