import NTCurlRuntime

extension CurlRuntime {
    /// Starts libcurl if it was not; a client error when it cannot start.
    static func ensureStarted() throws(NoughtyToursError) {
        if let failure = startFailure { throw .transport("libcurl failed to initialise: \(failure)") }
    }
}
