#if canImport(Glibc)
import Glibc
#endif

// The client command line. Its commands (init, property, plan, worldmap, panorama, sync,
// status) are built on the NoughtyTours library as the client issues land.
let usage = """
usage: tours <command> [options]

The NoughtyTours command-line client. Commands arrive with the client library;
for now only --help is served.
"""

let arguments = CommandLine.arguments.dropFirst()
if arguments.isEmpty || arguments.contains("--help") || arguments.contains("-h") {
    print(usage)
    exit(0)
}
print("tours: unknown command \(arguments.first!); see tours --help")
exit(2)
