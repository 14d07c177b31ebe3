/// What `toursd`'s command line asks for. Parsing is pure, so tests call it directly.
public enum ToursdCommand: Equatable, Sendable {
    case serve(ToursdConfig)
    case help(String)

    public static let usage = """
    usage: toursd [serve] [--config PATH] [--host ADDR] [--port N] [--data-dir DIR]

    Runs the NoughtyTours sync backend in the foreground.

    subcommands:
      serve    run the HTTP server (the default)

    options:
      --config PATH    JSON configuration file (keys as in config/toursd.json)
      --host ADDR      address to listen on, IPv4 or IPv6 (overrides the file)
      --port N         port to listen on; 0 lets the OS pick (overrides the file)
      --data-dir DIR   where data is kept (overrides the file)
      --help           this text

    On start it prints "listening on http://ADDR:PORT" on stderr. SIGTERM or SIGINT stop it
    gracefully: no new connections, requests in flight finish within shutdownGraceMs.
    """

    /// Parses the arguments after the program name. `loadFile` reads a config file into a
    /// configuration (injected so tests need no files).
    public static func parse(_ arguments: [String],
                             loadFile: (String, inout ToursdConfig) throws(ConfigError) -> Void = { path, config throws(ConfigError) in try config.apply(file: path) })
        throws(ConfigError) -> ToursdCommand {
        var rest = arguments[...]
        if let first = rest.first, !first.hasPrefix("-") {
            guard first == "serve" else { throw ConfigError("unknown subcommand \"\(first)\"; see toursd --help") }
            rest = rest.dropFirst()
        }
        var configPath: String?
        var overrides: [(key: String, value: String)] = []
        while let flag = rest.popFirst() {
            if flag == "--help" || flag == "-h" { return .help(usage) }
            let key: String
            switch flag {
            case "--config": key = "config"
            case "--host": key = "host"
            case "--port": key = "port"
            case "--data-dir": key = "dataDir"
            default: throw ConfigError("unknown option \(flag); see toursd --help")
            }
            guard let value = rest.popFirst() else { throw ConfigError("\(flag) needs a value") }
            if key == "config" { configPath = value } else { overrides.append((key, value)) }
        }
        var config = ToursdConfig()
        if let configPath { try loadFile(configPath, &config) }
        for (key, value) in overrides { try config.set(key, value) }
        return .serve(config)
    }
}
