import NTHashing
import NTHTTPCore
import NTTourViewer

/// Signing in to /app with a tenant token, and out. The token travels only in the POST body;
/// the browser keeps a session cookie whose hash alone is stored. The sign-in form carries a
/// CSRF value that must match its cookie (double submit), and failures are limited per client
/// address.
struct SignIn: Sendable {
    let context: ServiceContext

    private var secure: Bool { context.config.publicUrl.hasPrefix("https://") }

    /// The form; a browser already signed in goes to the list.
    func form(_ request: Request, message: String? = nil, status: HTTPStatus = .ok) async throws -> Response {
        if message == nil, let cookie = Cookies(request.headers["cookie"])[ViewerCookie.session], !cookie.isEmpty,
           try await context.readOne({ try await ViewerStore.session($0, cookie: cookie, at: context.clock.now()) }) != nil {
            return .seeOther(ViewerPaths.list)
        }
        let csrf = Secrets.make(prefix: "")
        let cookie = SetCookie(name: ViewerCookie.signIn, value: csrf, path: ViewerPaths.signIn, maxAge: 3600, secure: secure)
        return .page(ViewerPages.signIn(message: message, csrf: csrf), status: status, headers: [cookie.field])
    }

    func submit(_ request: Request) async throws -> Response {
        let address = ClientAddress.of(peer: request.peerAddress, forwardedFor: request.headers["x-forwarded-for"],
                                       trusted: context.config.trustedProxyAddresses)
        let attempt: Int64
        switch try await context.signIns.admit(address) {
        case .admitted(let at): attempt = at
        case .refused(let wait):
            throw ServiceError(.tooManyRequests, "Too many failed sign-ins from your address. Try again in \(wait) seconds.", retryAfterSeconds: wait)
        }
        let form = try FormFields(try await request.body.collect(upTo: request.bodyLimit))
        guard let expected = Cookies(request.headers["cookie"])[ViewerCookie.signIn], let csrf = form["csrf"],
              constantTimeEquals(Array(expected.utf8), Array(csrf.utf8)) else {
            try await context.signIns.forget(address, at: attempt)
            return try await self.form(request, message: "The sign-in form expired. Please try again.", status: .forbidden)
        }
        let token = (form["token"] ?? "").trimmingCharacters(in: .whitespaces)
        // A failed attempt stays counted, as admitted.
        guard let signedIn = try await context.readOne({ try await TenantStore.signIn(token, $0) }) else {
            return try await self.form(request, message: "That token is not valid, or it was revoked.", status: .unauthorized)
        }
        let lifetime = context.config.sessionLifetimeSeconds
        let cookie = try await context.write { db in
            // This attempt succeeded: it alone is forgotten, the failures before it stay.
            try await SignInFailureStore.forget(db, address, at: attempt)
            return try await ViewerStore.startSession(db, tenant: signedIn.tenant, tokenId: signedIn.tokenId, lifetime: lifetime, at: context.clock.now())
        }
        return .seeOther(ViewerPaths.list, headers: [
            SetCookie(name: ViewerCookie.session, value: cookie, maxAge: lifetime, secure: secure).field,
            SetCookie(name: ViewerCookie.signIn, value: "", path: ViewerPaths.signIn, maxAge: 0, secure: secure).field,
        ])
    }

    func signOut(_ request: Request) async throws -> Response {
        _ = try await ViewerRoutes.checkedForm(request)
        if let cookie = Cookies(request.headers["cookie"])[ViewerCookie.session] {
            try await context.write { try await ViewerStore.endSession($0, cookie: cookie) }
        }
        return .seeOther(ViewerPaths.signIn, headers: [SetCookie(name: ViewerCookie.session, value: "", maxAge: 0, secure: secure).field])
    }
}
