import NoughtyTours

/// What `tours --help`, `tours help COMMAND` and `tours COMMAND --help` print.
enum Help {
    static let version = "tours \(NoughtyTours.version)"

    static let overview = """
    usage: tours [--config PATH] <command> [options]

    Captures are written to local storage at once (offline) and queued; tours sync uploads them.

    commands:
      init          keep the server, its token and where local storage goes
      property      create, list, show, download or delete properties
      plan          a floor's plan from a JSON file
      worldmap      a floor's saved world map
      panorama add  images as panoramas of a floor or a room
      sync          upload everything queued, with progress
      status        a property's status and its failed uploads; --watch follows it
      queue         list what waits to upload; drop an upload the server will not take
      prune         remove local copies of panoramas uploaded a while ago
      grant create  a grant for a capture device (prints its token once)
      help COMMAND  what a command does and takes (also tours COMMAND --help)
      version       the release (also --version)

    configuration: --config PATH, else $TOURS_CONFIG, else $XDG_CONFIG_HOME/tours/config.json
    (~/.config/tours/config.json); storage: ~/.local/share/tours unless init --storage says.

    \(exitCodes)
    """

    static let exitCodes = """
    exit codes:
      0  done
      1  the server or local storage failed (the message says which)
      2  usage: unknown command or option, missing argument
      3  not configured: run tours init
      4  not found: no such property, floor, room or queued upload (the message says which)
      5  invalid input: a bad plan file, a file that is not a JPEG, HEIC or PNG image, a
         floor that cannot be continued
      6  not synced: uploads stayed queued (the server is down or busy); nothing is lost,
         run tours sync again
      7  refused: the server refused the token or an upload for a reason retrying cannot
         fix (the message says which and what to do; tours queue list shows them)
    """

    /// Each command's own text, by its name.
    static let commands: [String: String] = [
        "init": """
        usage: tours init --server URL (--token-file FILE | --token TOKEN) [--storage DIR] [--offline]

        Keeps the server, its token and where local storage goes, in the configuration file
        (mode 0600). The token is read from FILE, or from standard input with --token-file -
        (so that it stays out of argv and shell history). Before saving, it asks the server
        for a property with the token: a server that cannot be reached or refuses the token
        saves nothing (exit 1 or 7). --offline saves without asking (a station set up with no
        network).
        """,
        "grant": """
        usage: tours grant create [PROPERTY ...] [--scope capture|read ...] [--expires 8h] [--json]

        Asks the server for a grant (this station's token must be the tenant's): a token for a
        capture device that may work only on the named properties (and, with capture, on those
        it creates) until it expires, never the tenant's whole account. --scope capture (the
        default) writes and reads; --scope read only reads, and names its properties.
        --expires takes 90s, 30m, 8h or 2d, within the server's grantMinSeconds and
        grantMaxSeconds. The token goes to standard output, shown only this once; on the
        device: tours init --server URL --token-file - reads it from standard input.
        """,
        "property": """
        usage: tours property create NAME [--floors N] [--meta KEY=VALUE ...] [--json]
               tours property list [--remote] [--json]
               tours property show ID [--json]
               tours property download ID [--json]
               tours property delete ID [--yes]

          create    a new property with N floors (1 by default), numbered from 0; prints its id
          list      every property here, with its sync state; --remote: the server's (another
                    station's too)
          show      a property: floors, rooms, status
          download  bring a property from the server here, to continue its floors; again
                    later, it refreshes (work queued here is kept)
          delete    delete it here, and on the server at the next sync; asks first, unless
                    --yes (needed when standard input is not a terminal)
        """,
        "plan": """
        usage: tours plan ID PLAN_FILE [--floor N] [--mode newScan|continueScan] [--worldmap FILE] [--json]

        A floor's plan (floor 0 unless --floor) from a JSON file:
          {"rooms": [{"room": "ID of a room to keep" (optional), "name": "Kitchen",
                      "outline": [[x, y], ...] (metres), "height": 2.5}]}
        newScan (the default) replaces the floor's rooms; continueScan keeps the rooms named by
        "room" and needs a floor with a plan and a saved world map. --worldmap saves the floor's
        world map with the plan.
        """,
        "worldmap": """
        usage: tours worldmap ID FILE [--floor N]

        Saves FILE as the world map of the floor (0 unless --floor): what continueScan resumes from.
        """,
        "panorama": """
        usage: tours panorama add ID IMAGE... [--floor N] [--room ROOM] [--at X,Y[,HEADING]] [--json]

        Each image becomes a panorama of the floor (0 unless --floor) or of the room ROOM (its
        id, or its name when one room has it; its floor found from the room). An image is
        checked by its content: a JPEG, HEIC or PNG file with a width and a height, named by its
        format (.jpg, .heic, .png); anything else is refused (exit 5) before anything is stored.
        The files themselves are left as they are. --at says where one IMAGE was taken on the
        floor's plan: X and Y in metres (x to the right, y down the plan, as room outlines are),
        HEADING the direction of the image's centre in degrees clockwise from up the plan.
        """,
        "sync": """
        usage: tours sync [--json]

        Forgives what failed, uploads everything queued (a progress bar on a terminal, a line
        per upload otherwise; a resumed upload counts what the server already has), then prunes
        the local copies of panoramas uploaded more than pruneUploadedAfterDays ago (7 by
        default; a negative number keeps them). Exit 6 when uploads stayed queued for a reason
        that may pass (the server down or busy), 7 when the server refused one for a reason
        retrying cannot fix.
        """,
        "status": """
        usage: tours status ID [--json] [--watch]

        A property's status from local storage (it works offline), and each failed upload with
        its last error and whether it will be retried. --watch follows it, uploading meanwhile,
        until it is complete (exit 0), deleted (4) or failed (6).
        """,
        "queue": """
        usage: tours queue list [--json]
               tours queue drop ITEM [--json]

          list  every upload not yet on the server: its number (ITEM), what it is, its state,
                attempts and last error
          drop  gives up an upload the server will not take (a panorama too large for it, a plan
                it refuses): what waited for it goes on without it; a dropped panorama leaves
                local storage too. A property's or floor's own upload cannot be dropped (delete
                the property), nor one being sent now.
        """,
        "prune": """
        usage: tours prune [--older-than DAYS] [--json]

        Removes the local copies of panoramas uploaded more than DAYS ago (the configuration's
        pruneUploadedAfterDays, 7 by default; 0: every uploaded one). They are on the server;
        status counts do not change.
        """,
    ]

    /// The text of `command`, or a usage error naming the commands there are.
    static func of(_ command: String) throws(CLIError) -> String {
        guard let text = commands[command] else {
            throw .usage("no command \"\(command)\"; the commands are " + commands.keys.sorted().joined(separator: ", "))
        }
        return text
    }
}
