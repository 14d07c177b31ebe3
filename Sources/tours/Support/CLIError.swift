import NoughtyTours

/// Why a command did not do what it was asked, and the exit code scripts see for it.
enum CLIError: Error {
    case usage(String)
    case notConfigured(String)
    /// What was looked for and where (the library's own `notFound` names nothing).
    case notFound(String)
    case library(NoughtyToursError)
    /// Work stayed queued for a reason that may pass: it is kept, and goes with the next `tours sync`.
    case notSynced(String)
    /// The server refused the token or an upload, for a reason retrying cannot fix.
    case refused(String)

    /// The exit codes `tours --help` documents.
    var exitCode: Int32 {
        switch self {
        case .usage: return 2
        case .notConfigured: return 3
        case .notFound, .library(.notFound): return 4
        case .library(.invalidInput), .library(.notContinuable), .library(.captureBlocked): return 5
        case .notSynced: return 6
        case .refused: return 7
        case .library(.storageUnavailable), .library(.transport), .library(.server), .library(.busy): return 1
        }
    }

    var message: String {
        switch self {
        case .usage(let text): return "\(text); see tours --help"
        case .notConfigured(let text), .notFound(let text), .notSynced(let text), .refused(let text): return text
        case .library(let error): return error.description
        }
    }
}

/// Runs a library call, its error as the command line's.
@discardableResult
func library<T>(_ body: () async throws(NoughtyToursError) -> T) async throws(CLIError) -> T {
    do {
        return try await body()
    } catch {
        throw .library(error)
    }
}
