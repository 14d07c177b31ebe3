import NTAPIModel
import NTHashing
import NTHTTPCore
import NTLogging
import NTServiceHTTP
import NTServiceModel
import NTServiceStorage
import NTTourUseCases
import NTTourViewer
import Synchronization

/// Who a viewer page is for and what it may show: a signed-in tenant (all its tours), or a
/// share link (one property, read-only).
struct ViewerScope: Sendable {
    var tenant: Int64
    var frame: PageFrame
    /// A share link's property: every page outside it is 404.
    var property: String?
    /// The origins a share link lets frame its embed form.
    var frameAncestors: [String] = []
    /// The share link the pages are seen through; nil: signed in.
    var share: OpenedShare? = nil
    /// The units the visitor chose with the pages' switch; nil: the tenant's (its branding).
    var chosenUnits: MeasureUnits? = nil
}

/// The units a visitor chooses with the pages' switch: `?units=metric` or `imperial` on any
/// page, kept in a cookie for the pages after (no script needed; a move in place sends it).
enum ChosenUnits {
    static let cookie = "nt_units"
    /// A year: a visitor's choice is theirs until they change it.
    static let keptSeconds = 365 * 24 * 3600

    /// The choice the request makes or carries, and whether it made it now (its answer then
    /// keeps it: `keep`).
    static func of(_ request: Request) -> (units: MeasureUnits, made: Bool)? {
        if let asked = (try? request.queryParameter("units")).flatMap({ $0 }).flatMap(MeasureUnits.init(rawValue:)) { return (asked, true) }
        return Cookies(request.headers["cookie"])[cookie].flatMap(MeasureUnits.init(rawValue:)).map { ($0, false) }
    }

    /// The answer to a request that made a choice, with the cookie that keeps it.
    static func keep(_ chosen: (units: MeasureUnits, made: Bool)?, in response: Response, secure: Bool) -> Response {
        guard let chosen, chosen.made else { return response }
        var kept = response
        var cookie = SetCookie(name: Self.cookie, value: chosen.units.rawValue, maxAge: keptSeconds, secure: secure)
        cookie.sameSiteStrict = false // a link followed from a chat keeps the choice too (the browser's default, Lax)
        kept.headers.append(cookie.field)
        return kept
    }
}

/// Who sees viewer pages, as their group's authentication found: a browser signed in to /app
/// (`SignedIn`) or a share link's visitor (`ShareVisitor`). A page's handler receives it.
protocol ViewerPrincipal: Sendable {
    var scope: ViewerScope { get }
}

/// A browser signed in to /app: its session (for its forms' CSRF check) and what it may see.
struct SignedIn: ViewerPrincipal {
    let session: ViewerSession
    let scope: ViewerScope
}

/// A share link's visitor: the link, and the one property it shows.
struct ShareVisitor: ViewerPrincipal {
    let share: OpenedShare
    var scope: ViewerScope
}

/// Whether a failing share page's link is unbranded: `ViewerErrors`, outside the share's
/// authentication, learns it here (set once the link is known) and names no platform then.
final class ShareErrorBranding: Sendable {
    let unbranded = Atomic<Bool>(false)
}

enum ShareErrorBrandingAttribute: RequestAttribute {
    typealias Value = ShareErrorBranding
}

/// The names of the viewer's cookies.
enum ViewerCookie {
    static let session = "nt_session"
    /// The sign-in form's CSRF value (double submit: the form and the cookie must agree).
    static let signIn = "nt_signin"
}

/// /app pages: the browser's session, else a redirect to sign-in.
struct SessionAuthentication: Sendable {
    let sessions: ViewerSessions
    let settings: ViewerSettings

    func authenticate(_ request: Request, _ body: @Sendable (SignedIn) async throws -> Response) async throws -> Response {
        guard let cookie = Cookies(request.headers["cookie"])[ViewerCookie.session], !cookie.isEmpty,
              let session = try await sessions.session(cookie: cookie) else {
            return .seeOther(ViewerPaths.signIn)
        }
        let subtitle = settings.subtitle.isEmpty ? session.tenantName : settings.subtitle
        let frame = PageFrame(paths: .app, subtitle: subtitle, csrf: session.csrf)
        let chosen = ChosenUnits.of(request)
        let response = try await body(SignedIn(session: session, scope: ViewerScope(tenant: session.tenant, frame: frame, property: nil, chosenUnits: chosen?.units)))
        return ChosenUnits.keep(chosen, in: response, secure: settings.publicUrl.hasPrefix("https://"))
    }
}

/// /t/{secret} pages: the link's tour, or 404 once it expired or was revoked.
struct ShareAuthentication: Sendable {
    let shares: Shares
    let settings: ViewerSettings

    func authenticate(_ request: Request, _ body: @Sendable (ShareVisitor) async throws -> Response) async throws -> Response {
        let secret = request.parameter("secret") ?? ""
        // A secret is base64url; anything else cannot be one and never reaches the database.
        guard (20...100).contains(secret.utf8.count), secret.utf8.allSatisfy(Self.isBase64URL),
              let share = try await shares.open(secret: secret) else {
            throw ServiceError(.notFound, "This share link has expired, was revoked, or never existed.")
        }
        request.attributes[ShareErrorBrandingAttribute.self]?.unbranded.store(!share.branded, ordering: .relaxed)
        // A visitor is shown the operator's line, never the tenant's own name (its branding, where
        // it set one, comes with the page); an unbranded link names neither the platform nor the operator.
        let subtitle = settings.subtitle.isEmpty || !share.branded ? nil : settings.subtitle
        var frame = PageFrame(paths: .share(secret: secret), subtitle: subtitle, csrf: nil,
                              offersOriginals: share.offersOriginals, platformName: share.branded ? settings.sharePlatformName : nil)
        frame.offersFloorPlans = share.offersFloorPlans
        let chosen = ChosenUnits.of(request)
        let response = try await body(ShareVisitor(share: share, scope: ViewerScope(tenant: share.tenant, frame: frame, property: share.propertyId,
                                                                                    frameAncestors: share.frameAncestors, share: share, chosenUnits: chosen?.units)))
        return ChosenUnits.keep(chosen, in: response, secure: settings.publicUrl.hasPrefix("https://"))
    }

    private static func isBase64URL(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "_"): return true
        default: return false
        }
    }
}

/// Errors of viewer pages as pages: the status and message `ServiceError.httpError` gives
/// them (the one mapping; `ServiceErrors`, inside this, has turned database errors into
/// service errors), in HTML instead of JSON, with the same headers (`Retry-After`).
struct ViewerErrors: Middleware {
    let logger: Logger
    /// Errors of share links' routes: their pages under the name they show (the operator's, or none).
    let shared: Bool
    var sharePlatformName: String?
    /// Errors of embed routes: their routes set no framing policy (each answer sets its own),
    /// so an error page carries the one that frames it nowhere.
    var embedded = false

    func respond(to request: Request, next: RequestResponder) async throws -> Response {
        let branding = ShareErrorBranding()
        var request = request
        if shared { request.attributes[ShareErrorBrandingAttribute.self] = branding }
        do {
            return try await next(request)
        } catch {
            let http: HTTPError
            switch error {
            case let error as ServiceError:
                if error.code == .internal { logger.error("request failed", ["id": request.id.description, "error": error.message]) }
                http = error.httpError
            case let error as HTTPErrorConvertible:
                http = error.httpError
            default:
                logger.error("request failed", ["id": request.id.description, "error": "\(error)"])
                http = ServiceError(.internal, "the server could not answer this page").httpError
            }
            let platformName = branding.unbranded.load(ordering: .relaxed) ? nil : sharePlatformName
            let frame = shared ? PageFrame(paths: .share(secret: ""), subtitle: nil, csrf: nil, platformName: platformName)
                : PageFrame(paths: .app, subtitle: nil, csrf: nil)
            let title = http.status.code == 404 ? "Not found" : String(describing: http.status.reason)
            return Response(status: http.status, contentType: ViewerResponses.html,
                            headers: http.headers + (embedded ? ViewerResponses.framing(allowing: []) : []),
                            body: .bytes(ViewerPages.error(frame, title: title, message: http.message)))
        }
    }
}

enum ViewerResponses {
    static let html = "text/html; charset=utf-8"

    /// On every viewer answer: nothing loads from outside the origin, nothing frames the
    /// pages, and no page's URL (a share link's secret) leaves in a Referer.
    static let security = framing(allowing: []) + unframed

    /// Every viewer answer's headers but its framing policy.
    private static let unframed = [
        HTTPField(name: "X-Content-Type-Options", value: "nosniff"),
        HTTPField(name: "Referrer-Policy", value: "no-referrer"),
        HTTPField(name: "Cross-Origin-Opener-Policy", value: "same-origin"),
    ]

    /// The content policy, its `frame-ancestors` the origins given (each checked by
    /// `FrameAncestor` when its share was made); none: `'none'`, with `X-Frame-Options: DENY`
    /// for browsers that predate `frame-ancestors`.
    static func framing(allowing origins: [String]) -> [HTTPField] {
        let ancestors = origins.isEmpty ? "'none'" : origins.joined(separator: " ")
        let policy = HTTPField(name: "Content-Security-Policy", value: "default-src 'self'; img-src 'self'; style-src 'self'; script-src 'self'; "
                               + "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors " + ancestors)
        return origins.isEmpty ? [policy, HTTPField(name: "X-Frame-Options", value: "DENY")] : [policy]
    }

    /// Pages hold a tenant's data: never stored by a cache.
    static let page = security + [HTTPField(name: "Cache-Control", value: "no-store")]
    /// A share's embed form: its framing policy is the share's, set by each answer.
    static let embed = unframed + [HTTPField(name: "Cache-Control", value: "no-store")]
    /// The compiled-in style sheet and script change only with toursd.
    static let asset = security + [HTTPField(name: "Cache-Control", value: "public, max-age=3600")]
}

extension Response {
    package static func page(_ bytes: [UInt8], status: HTTPStatus = .ok, headers: [HTTPField] = []) -> Response {
        Response(status: status, contentType: ViewerResponses.html, headers: headers, body: .bytes(bytes))
    }

    /// 303 See Other (RFC 9110 §15.4.4): after a form, or to sign-in.
    package static func seeOther(_ location: String, headers: [HTTPField] = []) -> Response {
        Response(status: .seeOther, headers: [HTTPField(name: "Location", value: location)] + headers)
    }
}
