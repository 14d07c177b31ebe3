import CNTCurl

/// libcurl's process-wide set-up, for every module that makes handles (the client's transfers,
/// the bucket's, the webhooks'). `curl_global_init` is not thread-safe and must run once per
/// process before any handle is made (the mistake of lazily calling it from several threads,
/// or once per wrapper): a Swift global `static let` is initialised exactly once, atomically.
public enum CurlRuntime {
    private static let initialized: CURLcode = curl_global_init(Int(CURL_GLOBAL_DEFAULT))

    /// Why libcurl cannot start, or nil once it has (initialising it if it was not).
    public static var startFailure: String? {
        initialized == CURLE_OK ? nil : String(cString: curl_easy_strerror(initialized))
    }
}
