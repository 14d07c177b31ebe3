import NTHashing
import NTHTTPCore
import NTServiceHTTP
import NTServiceModel
import NTServiceStorage
import NTTourUseCases
import NTTourViewer

/// Signing in to /app with a tenant token, and out. The token travels only in the POST body;
/// the browser keeps a session cookie whose hash alone is stored. The sign-in form carries a
/// CSRF value that must match its cookie (double submit), and failures are limited per client
/// address.
struct SignIn: Sendable {
    let viewer: ViewerService

    private var secure: Bool { viewer.settings.publicUrl.hasPrefix("https://") }

    /// The form; a browser already signed in goes to the list.
    func form(_ request: Request, message: String? = nil, status: HTTPStatus = .ok) async throws -> Response {
        if message == nil, let cookie = Cookies(request.headers["cookie"])[ViewerCookie.session], !cookie.isEmpty,
           try await viewer.sessions.session(cookie: cookie) != nil {
            return .seeOther(ViewerPaths.list)
        }
        let csrf = Secrets.make(prefix: "")
        let cookie = SetCookie(name: ViewerCookie.signIn, value: csrf, path: ViewerPaths.signIn, maxAge: 3600, secure: secure)
        return .page(ViewerPages.signIn(message: message, csrf: csrf), status: status, headers: [cookie.field])
    }

    func submit(_ request: Request) async throws -> Response {
        let address = ClientAddress.of(peer: request.peerAddress, forwardedFor: request.headers["x-forwarded-for"],
                                       trusted: viewer.settings.trustedProxies)
        let attempt: Int64
        switch try await viewer.signIns.admit(address) {
        case .admitted(let at): attempt = at
        case .refused(let wait):
            throw ServiceError(.tooManyRequests, "Too many failed sign-ins from your address. Try again in \(wait) seconds.", retryAfterSeconds: wait)
        }
        let form = try FormFields(try await request.body.collect(upTo: request.bodyLimit))
        guard let expected = Cookies(request.headers["cookie"])[ViewerCookie.signIn], let csrf = form["csrf"],
              constantTimeEquals(Array(expected.utf8), Array(csrf.utf8)) else {
            try await viewer.signIns.forget(address, at: attempt)
            return try await self.form(request, message: "The sign-in form expired. Please try again.", status: .forbidden)
        }
        let token = (form["token"] ?? "").trimmingCharacters(in: .whitespaces)
        // A failed attempt stays counted, as admitted.
        guard let cookie = try await viewer.sessions.signIn(token: token, from: address, attempt: attempt) else {
            return try await self.form(request, message: "That token is not valid, or it was revoked.", status: .unauthorized)
        }
        return .seeOther(ViewerPaths.list, headers: [
            SetCookie(name: ViewerCookie.session, value: cookie, maxAge: viewer.sessions.lifetime, secure: secure).field,
            SetCookie(name: ViewerCookie.signIn, value: "", path: ViewerPaths.signIn, maxAge: 0, secure: secure).field,
        ])
    }

    func signOut(_ signedIn: SignedIn, _ request: Request) async throws -> Response {
        _ = try await ViewerRoutes.checkedForm(signedIn, request)
        if let cookie = Cookies(request.headers["cookie"])[ViewerCookie.session] {
            try await viewer.sessions.end(cookie: cookie)
        }
        return .seeOther(ViewerPaths.signIn, headers: [SetCookie(name: ViewerCookie.session, value: "", maxAge: 0, secure: secure).field])
    }
}
