#if canImport(Glibc)
import Glibc
#endif

// tours: the NoughtyTours command line, on the client library. Thin: parse, run, exit code.
let usage = """
usage: tours [--config PATH] <command> [options]

Captures are written to local storage at once (offline) and queued; tours sync uploads them.

commands:
  init --server URL --token TOKEN [--storage DIR]
                               keep the server, its token and where local storage goes
  property create NAME [--floors N] [--meta KEY=VALUE ...] [--json]
                               a new property (prints its id)
  property list [--json]       every property, with its sync state
  property list --remote [--json]
                               the properties on the server (another station's too)
  property show ID [--json]    a property: floors, rooms, status
  property download ID [--json]
                               bring a property from the server here, to continue its floors;
                               again later, it refreshes (work queued here is kept)
  property delete ID           delete it here, and on the server at the next sync
  plan ID PLAN_FILE [--floor N] [--mode newScan|continueScan] [--worldmap FILE] [--json]
                               a floor's plan from a JSON file:
                               {"rooms": [{"room": "ID to keep" (optional), "name": "Kitchen",
                                           "outline": [[x, y], ...] (metres), "height": 2.5}]}
  worldmap ID FILE [--floor N] the floor's saved world map
  panorama add ID IMAGE... [--floor N] [--room ROOM_ID] [--json]
                               images (.jpg, .heic, .png) as panoramas of a floor or a room
  sync [--json]                upload everything queued, with progress
  status ID [--json] [--watch] a property's status, and each failed upload with its last
                               error and whether it will be retried; --watch follows it,
                               uploading, until it is complete

--floor is the floor's number (0, the ground floor, by default).

configuration: --config PATH, else $TOURS_CONFIG, else $XDG_CONFIG_HOME/tours/config.json
(~/.config/tours/config.json); storage: ~/.local/share/tours unless init --storage says.

exit codes:
  0  done
  1  the server or local storage failed (the message says which)
  2  usage: unknown command or option, missing argument
  3  not configured: run tours init
  4  not found: no such property, floor or room
  5  invalid input: a bad plan file, an unreadable or unsupported image, a floor that
     cannot be continued
  6  not synced: uploads stayed queued (the server is down or refused them); nothing is
     lost, run tours sync again
"""

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.isEmpty || arguments.contains("--help") || arguments.contains("-h") {
    print(usage)
    exit(arguments.isEmpty ? 2 : 0)
}
do {
    try await Commands.run(arguments)
    exit(0)
} catch {
    Output.error(error.message)
    exit(error.exitCode)
}
