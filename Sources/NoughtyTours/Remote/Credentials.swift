import Synchronization

/// The host's way to a fresh credential (docs/client.md "Grants"): typically a call to its own
/// backend, which makes a grant for this device (`POST /v1/grants`) and returns its token. The
/// library calls it when the server says the grant it holds expired.
public typealias CredentialProvider = @Sendable () async throws -> String

/// The bearer token the library sends, and how it gets a fresh one: when the server answers
/// `grant_expired`, the provider is asked once, however many requests found the same grant
/// expired together, and each sends again with the new token in the same attempt.
final class Credentials: Sendable {
    private let current: Mutex<String>
    private let provider: CredentialProvider?
    private let renewal = Mutex<Task<String, any Error>?>(nil)

    init(token: String, provider: CredentialProvider?) {
        current = Mutex(token)
        self.provider = provider
    }

    var token: String { current.withLock { $0 } }

    /// A token in place of `stale`: the one another request got already, or the provider's.
    /// nil without a provider; `transport` (retryable) when the provider failed or gave a
    /// token that cannot go into a header.
    func renewed(replacing stale: String) async -> Result<String, NoughtyToursError>? {
        guard let provider else { return nil }
        let task = renewal.withLock { renewal -> Task<String, any Error>? in
            // Renewed already (by the request that asked first): that token.
            guard token == stale else { return nil }
            if let renewal { return renewal }
            let made = Task { [self] in
                let fresh = try await provider()
                guard Self.isValid(fresh) else { throw NoughtyToursError.invalidInput("the credential provider's token is not printable ASCII without spaces") }
                current.withLock { $0 = fresh }
                return fresh
            }
            renewal = made
            return made
        }
        guard let task else { return .success(token) }
        let result = await task.result
        renewal.withLock { if $0 == task { $0 = nil } }
        return result.mapError { .transport("could not get a fresh credential from the host: \($0)") }
    }

    /// RFC 6750's b64token is printable ASCII: a space, a control character or a line break
    /// would break the header line (or inject another).
    static func isValid(_ token: String) -> Bool {
        !token.isEmpty && token.unicodeScalars.allSatisfy { (0x21...0x7e).contains($0.value) }
    }
}

extension CurlMulti {
    /// `request` with the server's credential; an answer saying the grant expired gets a fresh
    /// credential from the host (once) and the request is sent again with it, in the same
    /// attempt. Any other answer, a revoked grant's among them, is returned as it is.
    func perform(_ request: HTTPRequest, _ credentials: Credentials, limits: TransferLimits,
                 progress: ProgressHandler? = nil) async -> Result<HTTPResponse, NoughtyToursError> {
        let first = await perform(request, limits: limits, progress: progress)
        guard case .success(let answer) = first, answer.status == 401, case .server(_, "grant_expired", _) = answer.error,
              let sent = request.bearerToken, let renewed = await credentials.renewed(replacing: sent) else { return first }
        switch renewed {
        case .success(let fresh): return await perform(request.authorized(fresh), limits: limits, progress: progress)
        case .failure(let error): return .failure(error)
        }
    }
}

extension HTTPRequest {
    /// The token of its `Authorization: Bearer` header.
    var bearerToken: String? {
        header("Authorization").flatMap { $0.hasPrefix("Bearer ") ? String($0.dropFirst(7)) : nil }
    }

    /// The request with another bearer token.
    func authorized(_ token: String) -> HTTPRequest {
        var request = self
        request.headers = headers.map { $0.name.lowercased() == "authorization" ? ($0.name, "Bearer \(token)") : $0 }
        return request
    }
}
