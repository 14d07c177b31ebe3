import CNTCurl

/// libcurl's process-wide set-up. `curl_global_init` is not thread-safe and must run once
/// before any handle is made (the mistake of lazily calling it from several threads): a
/// Swift global `static let` is initialised exactly once, atomically.
enum CurlRuntime {
    private static let initialized: CURLcode = curl_global_init(Int(CURL_GLOBAL_DEFAULT))

    /// Initialises libcurl if it was not; throws when libcurl cannot start.
    static func ensureInitialized() throws(NoughtyToursError) {
        guard initialized == CURLE_OK else {
            throw .transport("libcurl failed to initialise: \(String(cString: curl_easy_strerror(initialized)))")
        }
    }

    /// libcurl's version, e.g. "7.88.1".
    static var version: String { String(cString: nt_curl_version_info().pointee.version) }
}
