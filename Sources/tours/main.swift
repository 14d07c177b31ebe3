#if canImport(Glibc)
import Glibc
#endif

// tours: the NoughtyTours command line, on the client library. Thin: parse, run, exit code.
let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.isEmpty {
    print(Help.overview)
    exit(2)
}
do {
    try await Commands.run(arguments)
    exit(0)
} catch {
    Output.error(error.message)
    exit(error.exitCode)
}
