import NoughtyTours

/// Why a command did not do what it was asked, and the exit code scripts see for it.
enum CLIError: Error {
    case usage(String)
    case notConfigured(String)
    case library(NoughtyToursError)
    /// Work stayed queued: it is kept, and goes with the next `tours sync`.
    case notSynced(String)

    /// The exit codes `tours --help` documents.
    var exitCode: Int32 {
        switch self {
        case .usage: return 2
        case .notConfigured: return 3
        case .library(.notFound): return 4
        case .library(.invalidInput), .library(.notContinuable), .library(.captureBlocked): return 5
        case .notSynced: return 6
        case .library(.storageUnavailable), .library(.transport), .library(.server), .library(.busy): return 1
        }
    }

    var message: String {
        switch self {
        case .usage(let text): return "\(text); see tours --help"
        case .notConfigured(let text): return text
        case .notSynced(let text): return text
        case .library(let error): return error.description
        }
    }
}

/// Runs a library call, its error as the command line's.
func library<T>(_ body: () async throws(NoughtyToursError) -> T) async throws(CLIError) -> T {
    do {
        return try await body()
    } catch {
        throw .library(error)
    }
}
