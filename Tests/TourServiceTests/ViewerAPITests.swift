import Foundation
import Testing
import TestSupport
import TestTraits
@testable import NTServiceHTTP
@testable import NTServiceModel
@testable import NTServiceStorage
@testable import NTTourService
@testable import NTTourUseCases
@testable import NTUploads
@testable import NTViewerService
@testable import NTWebhooks
import NTHTTPCore
import NTLogging
import NTSQLKit

private let quietLogger = Logger(sink: LogSink(fd: open("/dev/null", O_WRONLY)), level: .error)

/// The tour viewer's HTTP side: sign-in and sessions, CSRF, security headers, share links
/// (docs/api.md "Sharing a tour"), previews. The browser walks the pages in Tests/browser.
@Suite(.hangGuard, .testThreads) struct ViewerAPITests {
    @Test func signingInSetsAnHttpOnlyStrictCookieStoredOnlyAsItsHash() async throws {
        let harness = try await ServiceHarness()
        let browser = try ViewerBrowser(harness)
        #expect(try browser.send("GET", "/app/").header("Location") == "/app/login")
        let signedIn = try browser.signIn(harness.alpha)
        #expect(signedIn.status == 303 && signedIn.header("Location") == "/app/")
        let setCookie = try #require(signedIn.headers.first { $0.name.lowercased() == "set-cookie" && $0.value.hasPrefix("nt_session=") }?.value)
        #expect(setCookie.contains("; HttpOnly") && setCookie.contains("; SameSite=Strict") && setCookie.contains("; Max-Age=43200"))
        #expect(!setCookie.contains("Secure"))
        let cookie = try #require(browser.cookies["nt_session"])
        #expect(cookie.utf8.count >= 43) // 256 random bits
        let list = try browser.send("GET", "/app/")
        #expect(list.status == 200 && String(decoding: list.body, as: UTF8.self).contains("alpha"))
        // The database holds the cookie's hash, never the cookie, and the page never the token.
        let stored = try await harness.service.records.read { db in
            try await db.query("SELECT cookie_hash, csrf FROM web_sessions").map { (try $0.decode("cookie_hash", as: [UInt8].self), try $0.decode("csrf", as: String.self)) }
        }
        #expect(stored.count == 1 && stored[0].0 == Secrets.hash(cookie) && stored[0].1 != cookie)
        if harness.config.databaseUrl.isEmpty { // SQLite: nowhere in its files either
            let database = try Data(contentsOf: URL(fileURLWithPath: harness.dataDir + "/toursd.sqlite"))
                + ((try? Data(contentsOf: URL(fileURLWithPath: harness.dataDir + "/toursd.sqlite-wal"))) ?? Data())
            #expect(database.range(of: Data(cookie.utf8)) == nil)
        }
        #expect(!String(decoding: list.body, as: UTF8.self).contains(harness.alpha))
        await harness.finish()
    }

    @Test func theCookieIsSecureWhenThePublicURLIsHTTPS() async throws {
        let harness = try await ServiceHarness(configure: { $0.publicUrl = "https://tours.example.com" })
        let browser = try ViewerBrowser(harness)
        let signedIn = try browser.signIn(harness.alpha)
        #expect(signedIn.headers.contains { $0.name.lowercased() == "set-cookie" && $0.value.hasPrefix("nt_session=") && $0.value.hasSuffix("; Secure") })
        await harness.finish()
    }

    @Test func aSessionEndsWhenItExpiresSignsOutOrItsTokenIsRevoked() async throws {
        let harness = try await ServiceHarness()
        let browser = try ViewerBrowser(harness)
        _ = try browser.signIn(harness.alpha)
        // Signing out needs the session's CSRF token.
        #expect(try browser.send("POST", "/app/logout", form: [:]).status == 403)
        let csrf = try #require(ViewerBrowser.csrf(try browser.send("GET", "/app/")))
        let cookie = try #require(browser.cookies["nt_session"])
        let out = try browser.send("POST", "/app/logout", form: ["csrf": csrf])
        #expect(out.status == 303 && out.header("Location") == "/app/login")
        browser.cookies["nt_session"] = cookie // a copy kept elsewhere no longer works
        #expect(try browser.send("GET", "/app/").header("Location") == "/app/login")

        // A token revoked on the command line ends the sessions signed in with it.
        let made = try await Admin.createToken(harness.config, tenant: "gamma", logger: quietLogger)
        _ = try ViewerBrowser(harness).signIn(made.token)
        let second = try ViewerBrowser(harness)
        _ = try second.signIn(made.token)
        #expect(try second.send("GET", "/app/").status == 200)
        try await Admin.revokeToken(harness.config, id: made.id, logger: quietLogger)
        #expect(try second.send("GET", "/app/").header("Location") == "/app/login")

        // An expired session is refused (the clock moved past its lifetime).
        let third = try ViewerBrowser(harness)
        _ = try third.signIn(harness.alpha)
        harness.clock.moveOn(seconds: Int64(harness.config.sessionLifetimeSeconds) + 1)
        #expect(try third.send("GET", "/app/").header("Location") == "/app/login")
        await harness.finish()
    }

    @Test func aSignInFormWithoutItsCSRFCookieIsRefused() async throws {
        let harness = try await ServiceHarness()
        let browser = try ViewerBrowser(harness)
        let form = try browser.send("GET", "/app/login")
        let csrf = try #require(ViewerBrowser.csrf(form))
        browser.cookies["nt_signin"] = nil
        let refused = try browser.send("POST", "/app/login", form: ["csrf": csrf, "token": harness.alpha])
        #expect(refused.status == 403 && browser.cookies["nt_session"] == nil)
        await harness.finish()
    }

    /// Balanced, the three sign-ins land on three daemons: the limit is theirs together.
    @Test func failedSignInsAreLimitedPerAddressWithRetryAfter() async throws {
        let harness = try await ServiceHarness(configure: { $0.signInFailuresAllowed = 2; $0.signInWindowSeconds = 120 })
        let browser = try ViewerBrowser(harness)
        #expect(try browser.signIn("nt_wrong").status == 401)
        #expect(try browser.signIn("nt_wrong").status == 401)
        let limited = try browser.signIn(harness.alpha) // even the right token waits
        #expect(limited.status == 429)
        #expect(Int(limited.header("Retry-After") ?? "") ?? 0 > 100)
        #expect(String(decoding: limited.body, as: UTF8.self).contains("Too many failed sign-ins"))
        await harness.finish()
    }

    /// Behind a proxy named in `trustedProxies`, failed sign-ins count per client it names;
    /// from any other peer `X-Forwarded-For` is ignored (anyone can send it).
    @Test func failedSignInsBehindATrustedProxyCountPerForwardedClient() async throws {
        for trusted in [true, false] {
            let harness = try await ServiceHarness(configure: {
                $0.signInFailuresAllowed = 2
                $0.trustedProxies = trusted ? ["127.0.0.1"] : []
            })
            let attacker = try ViewerBrowser(harness, forwardedFor: "203.0.113.7")
            #expect(try attacker.signIn("nt_wrong").status == 401)
            #expect(try attacker.signIn("nt_wrong").status == 401)
            #expect(try attacker.signIn("nt_wrong").status == 429)
            // Another client of the proxy; what it claims left of the proxy's entry counts for nothing.
            let other = try ViewerBrowser(harness, forwardedFor: "203.0.113.7, 198.51.100.2")
            #expect(try other.signIn(harness.alpha).status == (trusted ? 303 : 429), "trusted: \(trusted)")
            await harness.finish()
        }
    }

    /// The table holds one window's attempts: each new one forgets the older ones, of every
    /// address; a successful sign-in forgets itself alone, never the failures before it.
    @Test func theFailureTableHoldsOneWindowAndASignInForgetsOnlyItself() async throws {
        let harness = try await ServiceHarness(configure: { $0.signInFailuresAllowed = 2; $0.signInWindowSeconds = 120 })
        let records = harness.service.records
        let (old, address): ([UInt8], [UInt8]) = ([10, 0, 0, 1], [127, 0, 0, 1])
        try await records.write { db in
            for at in [Int64(100), 200] { try await SignInFailureStore.record(db, old, now: at, forgetting: at - 120) }
            try await SignInFailureStore.record(db, address, now: 400, forgetting: 400 - 120)
        }
        let counts = try await records.read { db in
            (try await SignInFailureStore.recent(db, old, since: 0).count, try await db.first("SELECT count(*) AS n FROM sign_in_failures")?.decodeIfPresent("n", as: Int.self))
        }
        #expect(counts.0 == 0 && counts.1 == 1)
        // Through the sign-in form, from one address (each time a new browser).
        _ = try await records.write { try await $0.run("DELETE FROM sign_in_failures") }
        #expect(try ViewerBrowser(harness).signIn("nt_wrong").status == 401)
        #expect(try ViewerBrowser(harness).signIn(harness.alpha).status == 303) // under the limit: in, and only it forgotten
        #expect(try ViewerBrowser(harness).signIn("nt_wrong").status == 401) // the second failure
        #expect(try ViewerBrowser(harness).signIn(harness.alpha).status == 429) // the first still counts
        await harness.finish()
    }

    @Test func everyViewerAnswerCarriesTheSecurityHeaders() async throws {
        let harness = try await ServiceHarness()
        let browser = try ViewerBrowser(harness)
        _ = try browser.signIn(harness.alpha)
        for target in ["/app/login", "/app/", "/app/properties/\(newID())", "/app/static/style.css", "/t/not-a-secret-at-all-really"] {
            let response = try browser.send("GET", target)
            let csp = response.header("Content-Security-Policy") ?? ""
            #expect(csp.contains("default-src 'self'") && csp.contains("frame-ancestors 'none'"), "\(target)")
            #expect(response.header("X-Content-Type-Options") == "nosniff", "\(target)")
            #expect(response.header("Referrer-Policy") == "no-referrer", "\(target)")
        }
        let missing = try browser.send("GET", "/app/properties/\(newID())")
        #expect(missing.status == 404 && missing.header("Content-Type") == "text/html; charset=utf-8")
        await harness.finish()
    }

    @Test func shareLinksAreMadeListedAndRevokedThroughTheAPI() async throws {
        let logFile = testDirectory("viewer-log").path
        defer { try? FileManager.default.removeItem(atPath: logFile) }
        let harness = try await ServiceHarness(logFile: logFile, logLevel: .info)
        let alpha = try harness.client(harness.alpha)
        let (propertyId, _) = try alpha.makeFloor()
        let tourId = try #require(try alpha.send("GET", "/v1/properties/\(propertyId)").string("tourId"))

        let made = try alpha.send("POST", "/v1/tours/\(tourId)/shares", json: ["expiresInSeconds": 3600, "label": "  Sent to the Millers "])
        #expect(made.status == 201)
        let url = try #require(made.string("url"))
        let id = try #require(made.string("id"))
        #expect(made.string("tourId") == tourId && made.string("expiresAt") != nil)
        // Its label trimmed; its originals private unless it says otherwise.
        #expect(made.string("label") == "Sent to the Millers" && made.json?["offersOriginals"] as? Bool == false)
        let secret = String(url.dropFirst(3))
        #expect(url.hasPrefix("/t/") && secret.utf8.count >= 22) // at least 128 random bits

        let listed = try alpha.send("GET", "/v1/tours/\(tourId)/shares")
        let items = try #require(listed.json?["items"] as? [[String: Any]])
        #expect(items.count == 1 && items[0]["id"] as? String == id && items[0]["url"] as? String == url && items[0]["label"] as? String == "Sent to the Millers")
        // Without a lifetime, the server's default (shareDefaultSeconds: 30 days); without a label, none.
        let plain = try alpha.send("POST", "/v1/tours/\(tourId)/shares", json: [:])
        let (created, expires) = (try #require(plain.string("createdAt")), try #require(plain.string("expiresAt")))
        #expect(plain.status == 201 && plain.json?["label"] is NSNull)
        let rfc3339 = ISO8601DateFormatter()
        rfc3339.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        #expect(try #require(rfc3339.date(from: expires)).timeIntervalSince(try #require(rfc3339.date(from: created))) == 30 * 86_400)
        #expect(try alpha.send("DELETE", "/v1/shares/\(try #require(plain.string("id")))").status == 204)
        for (body, message) in [(["label": ""] as [String: Any], "label must be 1 to 200"), (["label": String(repeating: "x", count: 201)], "label must be 1 to 200"),
                                (["label": "a\u{0}b"], "label must not contain control"), (["label": 5], "label must be a string"),
                                (["offersOriginals": "yes"], "offersOriginals must be true or false")] {
            let refused = try alpha.send("POST", "/v1/tours/\(tourId)/shares", json: body)
            #expect(refused.status == 400 && refused.text.contains(message), "\(body): \(refused.text)")
        }

        let anonymous = try harness.client(nil)
        let opened = try anonymous.send("GET", url)
        // Without publicPlatformName, nothing of the platform's name on a visitor's page.
        #expect(opened.status == 200 && !opened.text.contains("NoughtyTours"))
        // Another tenant sees neither the tour's links nor can revoke one.
        let beta = try harness.client(harness.beta)
        #expect(try beta.send("GET", "/v1/tours/\(tourId)/shares").status == 404)
        #expect(try beta.send("POST", "/v1/tours/\(tourId)/shares", json: ["expiresInSeconds": 3600]).status == 404)
        #expect(try beta.send("DELETE", "/v1/shares/\(id)").status == 404)
        #expect(try anonymous.send("GET", url).status == 200)

        #expect(try alpha.send("DELETE", "/v1/shares/\(id)").status == 204)
        #expect(try anonymous.send("GET", url).status == 404)
        #expect(try alpha.send("DELETE", "/v1/shares/\(id)").status == 404)
        let after = try alpha.send("GET", "/v1/tours/\(tourId)/shares")
        #expect((after.json?["items"] as? [Any])?.isEmpty == true)

        // Lifetimes outside 1 hour to 90 days are refused.
        for seconds in [3599, 90 * 86_400 + 1] {
            let refused = try alpha.send("POST", "/v1/tours/\(tourId)/shares", json: ["expiresInSeconds": seconds])
            #expect(refused.status == 400 && refused.errorCode == "bad_request")
        }
        #expect(try alpha.send("POST", "/v1/tours/\(newID())/shares", json: ["expiresInSeconds": 3600]).status == 404)
        await harness.stop()
        // The secret is never logged: the access log names the route instead.
        let log = try String(contentsOfFile: logFile, encoding: .utf8)
        #expect(!log.contains(secret))
        #expect(log.contains("path=/t/{secret}"))
        await harness.finish()
    }

    /// docs/api.md "Sharing a tour": a link's embed form may be framed by the origins the link
    /// names, and by none by default; every other page of the viewer by none.
    @Test func aShareLinksEmbedIsFramedOnlyWhereTheLinkSays() async throws {
        let harness = try await ServiceHarness()
        let alpha = try harness.client(harness.alpha)
        let (propertyId, floorId) = try alpha.makeFloor()
        let panoramaId = newID()
        try alpha.putPanorama(panoramaId, floorId: floorId, bytes: try JPEGFixture.panorama(width: 512), contentType: "image/jpeg")
        let tourId = try #require(try alpha.send("GET", "/v1/properties/\(propertyId)").string("tourId"))
        let made = try alpha.send("POST", "/v1/tours/\(tourId)/shares", json: [
            "expiresInSeconds": 3600, "frameAncestors": ["https://Agency.example", "http://127.0.0.1:8123", "https://*.agency.example", "https://agency.example"],
        ])
        #expect(made.status == 201, "\(made.text)")
        let origins = ["https://agency.example", "http://127.0.0.1:8123", "https://*.agency.example"]
        #expect(made.json?["frameAncestors"] as? [String] == origins)
        let listed = try #require(try alpha.send("GET", "/v1/tours/\(tourId)/shares").json?["items"] as? [[String: Any]])
        #expect(listed.first?["frameAncestors"] as? [String] == origins)
        let link = try #require(made.string("url"))
        let plain = try #require(try alpha.send("POST", "/v1/tours/\(tourId)/shares", json: ["expiresInSeconds": 3600]).string("url"))

        let visitor = try harness.client(nil)
        for path in [link + "/embed", link + "/embed/panoramas/\(panoramaId)"] {
            let embed = try visitor.send("GET", path)
            #expect(embed.status == 200, "\(path)")
            #expect(embed.header("Content-Security-Policy")?.hasSuffix("; frame-ancestors " + origins.joined(separator: " ")) == true, "\(path)")
            #expect(embed.header("X-Frame-Options") == nil && embed.header("Cache-Control") == "no-store")
            #expect(embed.text.contains("<body class=\"embed tour\" data-panoramas=") && !embed.text.contains("class=\"bar\"") && embed.text.contains("id=\"viewer\""))
        }
        // The link's other pages, a link that names no origin, and an embed's errors: framed nowhere.
        for path in [link, link + "/panoramas/\(panoramaId)", plain + "/embed", link + "/embed/panoramas/\(newID())", "/t/\(String(repeating: "x", count: 43))/embed"] {
            let response = try visitor.send("GET", path)
            #expect(response.header("Content-Security-Policy")?.hasSuffix("frame-ancestors 'none'") == true, "\(path)")
            #expect(response.header("X-Frame-Options") == "DENY", "\(path)")
        }
        // Anything but an origin would write into the policy, or frame more than meant: refused.
        for bad in ["https://a.example; script-src *", "javascript:alert(1)", "https://a.example/path", "*", "https://*.example", "ftp://a.example",
                    "https://a.example:0", "https://a.example:+80", "https://a..example", "'self'", "https://a.example:99999", "https://-a.example",
                    "https://a.example ", "https://exämple.com"] {
            let refused = try alpha.send("POST", "/v1/tours/\(tourId)/shares", json: ["expiresInSeconds": 3600, "frameAncestors": [bad]])
            #expect(refused.status == 400 && refused.errorCode == "bad_request", "\(bad): \(refused.status)")
        }
        let tooMany = (0...harness.config.maxFrameAncestorsPerShare).map { "https://site\($0).example" }
        #expect(try alpha.send("POST", "/v1/tours/\(tourId)/shares", json: ["expiresInSeconds": 3600, "frameAncestors": tooMany]).status == 400)
        #expect(try alpha.send("POST", "/v1/tours/\(tourId)/shares", json: ["expiresInSeconds": 3600, "frameAncestors": "https://a.example"]).status == 400)
        await harness.finish()
    }

    /// docs/api.md: the list holds the unexpired links; a secret is stored only as its hash.
    /// docs/security.md "A live link can be copied again": its URL is listed to its tenant (in
    /// the API and on the property page, with a copy button) while it lives; a link whose secret
    /// is not its id's under the deployment's key (made before, or under another key) still
    /// opens, and is listed without one.
    @Test func aLiveLinkCanBeCopiedAgainAndOneMadeOtherwiseStillOpens() async throws {
        let harness = try await ServiceHarness()
        let alpha = try harness.client(harness.alpha)
        let (propertyId, _) = try alpha.makeFloor()
        let tourId = try #require(try alpha.send("GET", "/v1/properties/\(propertyId)").string("tourId"))
        let made = try alpha.send("POST", "/v1/tours/\(tourId)/shares", json: ["label": "Millers"])
        let (url, id) = (try #require(made.string("url")), try #require(made.string("id")))
        let browser = try ViewerBrowser(harness)
        #expect(try browser.signIn(harness.alpha).status == 303)
        let page = try browser.send("GET", "/app/properties/\(propertyId)").text
        #expect(page.contains("id=\"link-\(id)\" value=\"http://") && page.contains("\(url)\"><button type=\"button\" class=\"copy hidden\" data-copies=\"link-\(id)\">Copy link</button>"))
        // A link with a secret of its own (as every link made before): it opens, and is listed without a URL.
        let older = "/t/" + Secrets.make(prefix: "")
        let olderId = try #require(try alpha.send("POST", "/v1/tours/\(tourId)/shares", json: [:]).string("id"))
        _ = try await harness.service.records.write { db in
            try await db.run("UPDATE shares SET secret_hash = ? WHERE id = ?", Blob(Secrets.hash(String(older.dropFirst(3)))), olderId)
        }
        #expect(try harness.client(nil).send("GET", older).status == 200 && harness.client(nil).send("GET", url).status == 200)
        let items = try #require(try alpha.send("GET", "/v1/tours/\(tourId)/shares").json?["items"] as? [[String: Any]])
        let urls = Dictionary(uniqueKeysWithValues: items.map { ($0["id"] as? String ?? "", $0["url"] as? String) })
        #expect(urls[id] == url && urls[olderId] == .some(nil), "\(urls)")
        // Revoked, it is listed no more and opens nothing.
        #expect(try alpha.send("DELETE", "/v1/shares/\(id)").status == 204)
        #expect(try harness.client(nil).send("GET", url).status == 404)
        await harness.finish()
    }

    @Test func anExpiredLinkLeavesTheListAndNoSecretIsStored() async throws {
        let harness = try await ServiceHarness(configure: { $0.shareMinSeconds = 1 })
        let alpha = try harness.client(harness.alpha)
        let (propertyId, _) = try alpha.makeFloor()
        let tourId = try #require(try alpha.send("GET", "/v1/properties/\(propertyId)").string("tourId"))
        let short = try #require(try alpha.send("POST", "/v1/tours/\(tourId)/shares", json: ["expiresInSeconds": 1]).string("id"))
        let long = try alpha.send("POST", "/v1/tours/\(tourId)/shares", json: ["expiresInSeconds": 3600])
        let secret = String(try #require(long.string("url")).dropFirst(3))
        let listed = { try ((alpha.send("GET", "/v1/tours/\(tourId)/shares").json?["items"] as? [[String: Any]]) ?? []).compactMap { $0["id"] as? String } }
        #expect(try listed().contains(short))
        try await waitUntil("the short link's expiry") { try !listed().contains(short) }
        #expect(try listed() == [try #require(long.string("id"))])
        let stored = try await harness.service.records.read { db in
            try await db.query("SELECT * FROM shares").flatMap(\.values)
        }
        #expect(stored.contains(.blob(Secrets.hash(secret))))
        #expect(!stored.contains { $0 == .text(secret) || $0 == .blob(Array(secret.utf8)) })
        await harness.finish()
    }

    @Test func aDeletedPropertyTakesItsShareLinksAlong() async throws {
        let harness = try await ServiceHarness()
        let alpha = try harness.client(harness.alpha)
        let (propertyId, _) = try alpha.makeFloor()
        let tourId = try #require(try alpha.send("GET", "/v1/properties/\(propertyId)").string("tourId"))
        let url = try #require(try alpha.send("POST", "/v1/tours/\(tourId)/shares", json: ["expiresInSeconds": 3600]).string("url"))
        #expect(try alpha.send("DELETE", "/v1/properties/\(propertyId)").status == 204)
        #expect(try harness.client(nil).send("GET", url).status == 404)
        let rows = try await harness.service.records.read { try await $0.first("SELECT count(*) FROM shares")?.decodeIfPresent(0, as: Int.self) }
        #expect(rows == 0)
        await harness.finish()
    }

    @Test func previewsComeInTheConfiguredWidthsFromACacheThatGoesWithThePanorama() async throws {
        let harness = try await ServiceHarness(alone: true) // reads the cache in the daemon's own dataDir
        let alpha = try harness.client(harness.alpha)
        let (_, floorId) = try alpha.makeFloor()
        let jpeg = try JPEGFixture.panorama(width: 2048)
        let id = newID()
        #expect(try alpha.putPanorama(id, floorId: floorId, bytes: jpeg, contentType: "image/jpeg").status == 201)

        let preview = try alpha.send("GET", "/v1/panoramas/\(id)/preview?width=1024")
        #expect(preview.status == 200 && preview.header("Content-Type") == "image/jpeg")
        #expect(JPEGFixture.dimensions(preview.body) == [1024, 512])
        let etag = try #require(preview.header("ETag"))
        #expect(try alpha.send("GET", "/v1/panoramas/\(id)/preview?width=1024", headers: ["If-None-Match": etag]).status == 304)
        // A preview is cached behind its answer, and the panorama's processing makes every width;
        // later answers are the files.
        let previews = harness.dataDir + "/previews"
        let cached = { filesUnder(previews).filter { $0.hasSuffix(".jpg") } }
        try await waitUntil("every width's file") {
            try alpha.send("GET", "/v1/panoramas/\(id)").string("state") == "ready" && cached().count == harness.config.previewWidths.count
        }
        #expect(try alpha.send("GET", "/v1/panoramas/\(id)/preview?width=1024").body == preview.body)
        #expect(JPEGFixture.dimensions(try alpha.send("GET", "/v1/panoramas/\(id)/preview").body) == [320, 160])
        // Private like the rest of the data directory.
        for path in ["previews"] + filesUnder(previews, withFolders: true).map({ "previews/" + $0 }) {
            var isFolder: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: harness.dataDir + "/" + path, isDirectory: &isFolder)
            let mode = ((try? FileManager.default.attributesOfItem(atPath: harness.dataDir + "/" + path)[.posixPermissions]) as? Int ?? -1) & 0o777
            #expect(mode == (isFolder.boolValue ? 0o700 : 0o600), "\(path) is \(String(mode, radix: 8))")
        }
        let refused = try alpha.send("GET", "/v1/panoramas/\(id)/preview?width=1000")
        #expect(refused.status == 400 && refused.errorCode == "bad_request")
        #expect(try harness.client(harness.beta).send("GET", "/v1/panoramas/\(id)/preview?width=1024").status == 404)
        #expect(try harness.client(nil).send("GET", "/v1/panoramas/\(id)/preview?width=1024").status == 401)

        #expect(try alpha.send("DELETE", "/v1/panoramas/\(id)").status == 204)
        #expect(cached().isEmpty)
        await harness.finish()
    }

    @Test func anImageThatCannotBeDecodedGetsAPlaceholder() async throws {
        let harness = try await ServiceHarness()
        let alpha = try harness.client(harness.alpha)
        let (_, floorId) = try alpha.makeFloor()
        let id = newID()
        #expect(try alpha.putPanorama(id, floorId: floorId, bytes: imageBytes(10_000, signature: ImageSignature.png), contentType: "image/png").status == 201)
        let preview = try alpha.send("GET", "/v1/panoramas/\(id)/preview?width=320")
        #expect(preview.status == 200 && JPEGFixture.dimensions(preview.body) == [320, 160])
        await harness.finish()
    }

    /// A panorama the server cannot read is said to be so on its page (with its original to
    /// download), not shown as a grey box to look around in; a readable one, JPEG, PNG or HEIC
    /// (an iPhone's default), gets the viewer.
    @Test func aPanoramaThatCannotBeReadIsSaidToBe() async throws {
        let harness = try await ServiceHarness()
        let alpha = try harness.client(harness.alpha)
        let (propertyId, floorId) = try alpha.makeFloor()
        let (good, damaged, png, heic, bomb) = (newID(), newID(), newID(), newID(), newID())
        #expect(try alpha.putPanorama(good, floorId: floorId, bytes: try JPEGFixture.panorama(width: 512), contentType: "image/jpeg").status == 201)
        #expect(try alpha.putPanorama(damaged, floorId: floorId, bytes: imageBytes(5_000), contentType: "image/jpeg").status == 201)
        #expect(try alpha.putPanorama(png, floorId: floorId, bytes: PNGFixture.make(width: 512, height: 256) { x, _ in (UInt8(x / 2), 80, 160) },
                                      contentType: "image/png").status == 201)
        #expect(try alpha.putPanorama(heic, floorId: floorId, bytes: try HEICFixture.make(width: 512, height: 256) { x, _ in (UInt8(x / 2), 80, 160) },
                                      contentType: "image/heic").status == 201)
        // 60,000 × 30,000 claimed in 60 bytes: refused from its header, never decoded.
        #expect(try alpha.putPanorama(bomb, floorId: floorId, bytes: PNGFixture.claiming(width: 60_000, height: 30_000), contentType: "image/png").status == 201)
        let tourId = try #require(try alpha.send("GET", "/v1/properties/\(propertyId)").string("tourId"))
        let link = try #require(try alpha.send("POST", "/v1/tours/\(tourId)/shares", json: ["expiresInSeconds": 3600]).string("url"))
        let visitor = try harness.client(nil)
        // Twice each: the first page waits for the preview's making, the second finds it cached.
        for _ in 0..<2 {
            let readable = try visitor.send("GET", "\(link)/panoramas/\(good)").text
            #expect(readable.contains("<canvas") && !readable.contains("could not be read"))
            let broken = try visitor.send("GET", "\(link)/panoramas/\(damaged)").text
            #expect(broken.contains("This panorama could not be read") && broken.contains("damaged") && !broken.contains("<canvas"))
            let refused = try visitor.send("GET", "\(link)/panoramas/\(bomb)").text
            #expect(refused.contains("This panorama could not be read") && !refused.contains("<canvas"))
            #expect(!broken.contains("/image") && !broken.contains("downloaded")) // a share link offers no original
            for id in [png, heic] {
                let page = try visitor.send("GET", "\(link)/panoramas/\(id)").text
                #expect(page.contains("<canvas") && !page.contains("could not be read"))
                let preview = try visitor.send("GET", "\(link)/panoramas/\(id)/preview?width=320")
                #expect(preview.status == 200 && JPEGFixture.dimensions(preview.body) == [320, 160])
            }
        }
        await harness.finish()
    }

    /// issue "The agent's side": the platform's name appears on a visitor's pages only where the
    /// operator's config says so (`publicPlatformName`), on its error pages too; the app keeps its own.
    @Test func aSharePageNamesThePlatformOnlyWhereTheOperatorSaysSo() async throws {
        let harness = try await ServiceHarness { $0.publicPlatformName = "TourHost" }
        let alpha = try harness.client(harness.alpha)
        let (propertyId, _) = try alpha.makeFloor()
        let tourId = try #require(try alpha.send("GET", "/v1/properties/\(propertyId)").string("tourId"))
        let url = try #require(try alpha.send("POST", "/v1/tours/\(tourId)/shares", json: [:]).string("url"))
        let visitor = try harness.client(nil)
        let page = try visitor.send("GET", url).text
        #expect(page.contains(" · TourHost</title>") && page.contains("<div class=\"brand\">TourHost") && !page.contains("NoughtyTours"))
        let gone = try visitor.send("GET", "/t/" + String(repeating: "a", count: 43))
        #expect(gone.status == 404 && gone.text.contains("Not found · TourHost</title>"), "\(gone.text.prefix(300))")
        await harness.finish()
    }

    /// Nothing private leaks through a share link: its full-size image, previews and tiles are
    /// made again from the pixels, so none of the camera's EXIF (GPS position, device serial,
    /// owner) reaches a visitor; the signed-in tenant still gets its original, byte for byte.
    @Test func aShareLinkServesNoCameraMetadata() async throws {
        let harness = try await ServiceHarness { $0.tileMinWidth = 1024 }
        let alpha = try harness.client(harness.alpha)
        let (propertyId, floorId) = try alpha.makeFloor()
        let secrets = ["GPSLatitude 51/1 30/1 26/1 N", "BodySerialNumber SN-4815162342", "OwnerName Agnes Example"]
        let exif = Array("Exif\0\0MM\0*".utf8) + Array(secrets.joined(separator: "\0").utf8)
        let plain = try JPEGFixture.panorama(width: 2048)
        let original = Array(plain[0..<2]) + [0xff, 0xe1] + withUnsafeBytes(of: UInt16(exif.count + 2).bigEndian, Array.init) + exif + Array(plain[2...])
        let id = newID()
        #expect(try alpha.putPanorama(id, floorId: floorId, bytes: original).status == 201)
        let tourId = try #require(try alpha.send("GET", "/v1/properties/\(propertyId)").string("tourId"))
        let link = try #require(try alpha.send("POST", "/v1/tours/\(tourId)/shares", json: ["expiresInSeconds": 3600, "offersOriginals": true]).string("url"))
        let visitor = try harness.client(nil)
        #expect(try visitor.send("GET", "\(link)/panoramas/\(id)").text.contains("Full-size image"))
        // A link that does not offer them (the default) links none, and its visitor fetches none.
        let views = try #require(try alpha.send("POST", "/v1/tours/\(tourId)/shares", json: [:]).string("url"))
        #expect(!(try visitor.send("GET", "\(views)/panoramas/\(id)").text.contains("Full-size image")))
        let refused = try visitor.send("GET", "\(views)/panoramas/\(id)/image")
        #expect(refused.status == 403 && refused.text.contains("not its full-size images"), "\(refused.status)")
        #expect(try visitor.send("GET", "\(views)/panoramas/\(id)/preview?width=320").status == 200)
        // Its first view asks for its tiles; a later one names them.
        var page = ""
        try await waitUntil("the panorama's tiles", seconds: 60) {
            page = try visitor.send("GET", "\(link)/panoramas/\(id)").text
            return page.contains("data-tiles=")
        }
        #expect(page.contains("Full-size image") && !page.contains("Original image"))
        let tiles = try #require(page.range(of: "data-tiles=\"")).upperBound
        let tileBase = String(page[tiles...].prefix { $0 != "\"" })
        var served: [(String, [UInt8])] = []
        for target in ["\(link)/panoramas/\(id)/image", "\(link)/panoramas/\(id)/preview?width=320", "\(link)/panoramas/\(id)/preview?width=1024"] {
            let answer = try visitor.send("GET", target)
            #expect(answer.status == 200 && answer.header("Content-Type") == "image/jpeg", "\(target): \(answer.status)")
            served.append((target, answer.body))
        }
        served.append(("a tile", try visitor.send("GET", tileBase + "0/f0_0.jpg").body))
        for (what, bytes) in served {
            let text = String(decoding: bytes, as: UTF8.self)
            #expect(!text.contains("Exif") && secrets.allSatisfy { !text.contains($0) }, "\(what) carries the camera's metadata")
        }
        let full = try #require(served.first?.1)
        #expect(JPEGFixture.dimensions(full) == [2048, 1024] || JPEGFixture.dimensions(full)?.first == harness.config.previewWidths.max())
        // The tenant, signed in to the app or through the API, gets its original.
        #expect(try alpha.send("GET", "/v1/panoramas/\(id)/content").body == original)
        await harness.finish()
    }

    /// Every viewer route that names an id, as tenant beta (signed in, or through beta's own
    /// share link) naming alpha's: 404, as in the API. Table-driven over the router.
    @Test func everyViewerRouteHidesAnotherTenantsIds() async throws {
        let harness = try await ServiceHarness()
        let alpha = try harness.client(harness.alpha)
        let (propertyId, floorId) = try alpha.makeFloor()
        let roomId = newID()
        try alpha.putPlan(floorId, mode: "newScan", rooms: [(roomId, "Kitchen")])
        let panoramaId = newID()
        try alpha.putPanorama(panoramaId, floorId: floorId, roomId: roomId, bytes: try JPEGFixture.panorama(width: 512), contentType: "image/jpeg")
        let tourId = try #require(try alpha.send("GET", "/v1/properties/\(propertyId)").string("tourId"))
        let shareId = try #require(try alpha.send("POST", "/v1/tours/\(tourId)/shares", json: ["expiresInSeconds": 3600]).string("id"))

        let betaClient = try harness.client(harness.beta)
        let (betaProperty, _) = try betaClient.makeFloor()
        let betaTour = try #require(try betaClient.send("GET", "/v1/properties/\(betaProperty)").string("tourId"))
        let betaLink = try #require(try betaClient.send("POST", "/v1/tours/\(betaTour)/shares", json: ["expiresInSeconds": 3600]).string("url"))
        let beta = try ViewerBrowser(harness)
        _ = try beta.signIn(harness.beta)
        let csrf = try #require(ViewerBrowser.csrf(try beta.send("GET", "/app/")))

        let ids = ["properties": propertyId, "floors": floorId, "rooms": roomId, "panoramas": panoramaId, "shares": shareId]
        var checked = 0
        for route in harness.service.makeRouter(metrics: ServerMetrics()).routes where route.pattern.contains("{id}") {
            let parts = route.pattern.split(separator: "/").map(String.init)
            let kind = try #require(parts.firstIndex(of: "{id}").map { parts[$0 - 1] })
            let path = route.pattern.replacingOccurrences(of: "{id}", with: try #require(ids[kind]))
                .replacingOccurrences(of: "/t/{secret}", with: betaLink)
                .replacingOccurrences(of: "{level}/{tile}", with: "0/f0_0.jpg")
            let response = try beta.send(route.method.name, path + (path.hasSuffix("/preview") ? "?width=320" : ""),
                                         form: route.method == .post ? ["csrf": csrf, "expiresInSeconds": "3600"] : nil)
            #expect(response.status == 404, "\(route.method.name) \(route.pattern): \(response.status)")
            checked += 1
        }
        #expect(checked == 20) // 13 under /app (4 its floor plans), 7 under /t/{secret} (one its embed form)
        // Alpha's link still works: beta's attempt to revoke it changed nothing.
        #expect((try alpha.send("GET", "/v1/tours/\(tourId)/shares").json?["items"] as? [Any])?.count == 1)
        await harness.finish()
    }
}

/// Cube tiles of large panoramas (docs/api.md "Tiles"): made in the background once a
/// panorama is stored, whichever way it came; named on its viewer page; served by name within
/// the pyramid; gone with the panorama. `tileMinWidth` is lowered so a 2048-pixel panorama
/// (faces of 640, two levels) is cut.
@Suite(.hangGuard, .testThreads) struct PanoramaTileTests {
    @Test func aLargePanoramaIsCutIntoTilesItsPageNamesAndTheyGoWithIt() async throws {
        let harness = try await ServiceHarness(alone: true) { $0.tileMinWidth = 1024 }
        let alpha = try harness.client(harness.alpha)
        let (propertyId, floorId) = try alpha.makeFloor()
        let (large, small) = (newID(), newID())
        #expect(try alpha.putPanorama(large, floorId: floorId, bytes: try JPEGFixture.panorama(width: 2048), contentType: "image/jpeg").status == 201)
        #expect(try alpha.putPanorama(small, floorId: floorId, bytes: try JPEGFixture.panorama(width: 512), contentType: "image/jpeg").status == 201)
        let tourId = try #require(try alpha.send("GET", "/v1/properties/\(propertyId)").string("tourId"))
        let link = try #require(try alpha.send("POST", "/v1/tours/\(tourId)/shares", json: ["expiresInSeconds": 3600]).string("url"))
        let visitor = try harness.client(nil)
        try await waitUntil("the large panorama's tiles", seconds: 60) {
            try visitor.send("GET", "\(link)/panoramas/\(large)").text.contains("data-tiles=")
        }
        let page = try visitor.send("GET", "\(link)/panoramas/\(large)").text
        #expect(page.contains("data-tiles=\"\(link)/panoramas/\(large)/tiles/\"") && page.contains("data-face-size=\"640\"")
                && page.contains("data-levels=\"2\"") && page.contains("data-tile-size=\"512\""))
        // Drawn at once from a small preview; the tiles sharpen it.
        #expect(page.contains("\(link)/panoramas/\(large)/preview?width=1024") && !page.contains("data-full"))
        #expect(try Self.tileSetsMade(harness) == 1)

        // Every tile the pyramid names, at its size: 640 is a 512 and a 128 tile across.
        for (level, name, size) in [(1, "f0_0", [512, 512]), (1, "r1_1", [128, 128]), (1, "u0_1", [128, 512]), (0, "d0_0", [320, 320])] {
            let tile = try visitor.send("GET", "\(link)/panoramas/\(large)/tiles/\(level)/\(name).jpg")
            #expect(tile.status == 200 && tile.header("Content-Type") == "image/jpeg" && JPEGFixture.dimensions(tile.body) == size, "\(level)/\(name)")
        }
        let first = try visitor.send("GET", "\(link)/panoramas/\(large)/tiles/1/f0_0.jpg")
        let etag = try #require(first.header("ETag"))
        #expect(try visitor.send("GET", "\(link)/panoramas/\(large)/tiles/1/f0_0.jpg", headers: ["If-None-Match": etag]).status == 304)
        // Names outside the pyramid, or not as written, are 404s; so is a panorama without tiles.
        for path in ["1/f2_0.jpg", "2/f0_0.jpg", "01/f0_0.jpg", "1/f00_0.jpg", "1/x0_0.jpg", "1/f0_0.png", "-1/f0_0.jpg", "0/..%2f..%2fpyramid"] {
            let refused = try visitor.send("GET", "\(link)/panoramas/\(large)/tiles/\(path)")
            #expect(refused.status == 404, "\(path): \(refused.status)")
        }
        #expect(try visitor.send("GET", "\(link)/panoramas/\(small)/tiles/0/f0_0.jpg").status == 404)
        #expect(!(try visitor.send("GET", "\(link)/panoramas/\(small)").text.contains("data-tiles")))
        // Another tenant's link does not reach them.
        #expect(try harness.client(harness.beta).send("GET", "/app/panoramas/\(large)/tiles/1/f0_0.jpg").status != 200)

        let tiles = harness.dataDir + "/previews"
        let stored = { filesUnder(tiles).filter { $0.contains("/tiles-") && $0.hasSuffix(".jpg") }.count }
        // Faces of 640: four tiles at level 1 and one at level 0, six times.
        #expect(stored() == 30)
        #expect(try alpha.send("DELETE", "/v1/panoramas/\(large)").status == 204)
        #expect(stored() == 0)
        #expect(try visitor.send("GET", "\(link)/panoramas/\(large)/tiles/1/f0_0.jpg").status == 404)
        await harness.finish()
    }

    /// Cutting a panorama stops past maxTileCpuSeconds (a 12288-wide one takes several seconds
    /// of CPU here): no tiles, and its preview stands in.
    @Test func aTilingPastItsCPUTimeStopsAndThePreviewStandsIn() async throws {
        let harness = try await ServiceHarness(alone: true) { $0.maxTileCpuSeconds = 1 }
        let alpha = try harness.client(harness.alpha)
        let (_, floorId) = try alpha.makeFloor()
        let id = newID()
        #expect(try alpha.putPanorama(id, floorId: floorId, bytes: try JPEGFixture.panorama(width: 12_288), contentType: "image/jpeg").status == 201)
        // Its processing tiles it before it is ready.
        try await waitUntil("the tiling to give up", seconds: 120) {
            try alpha.send("GET", "/v1/panoramas/\(id)").string("state") == "ready" && Self.metric(harness, "toursd_tiles_waiting") == 0
        }
        #expect(try Self.tileSetsMade(harness) == 0)
        #expect(try alpha.send("GET", "/v1/panoramas/\(id)/preview?width=1024").status == 200)
        let stored = filesUnder(harness.dataDir + "/previews").filter { $0.contains("/tiles-") }
        #expect(stored.isEmpty, "\(stored)")
        await harness.finish()
    }

    /// Tiles lost (a daemon stopped mid-way, or another daemon's data directory) are made
    /// again when a tile is asked for: 404 until then, never an error.
    @Test func missingTilesAreMadeAgainWhenAskedFor() async throws {
        let harness = try await ServiceHarness(alone: true) { $0.tileMinWidth = 1024 }
        let alpha = try harness.client(harness.alpha)
        let (_, floorId) = try alpha.makeFloor()
        let id = newID()
        #expect(try alpha.putPanorama(id, floorId: floorId, bytes: try JPEGFixture.panorama(width: 2048), contentType: "image/jpeg").status == 201)
        try await waitUntil("the first tiles", seconds: 60) { try Self.tileSetsMade(harness) == 1 }
        let tenants = harness.dataDir + "/previews"
        for tenant in try FileManager.default.contentsOfDirectory(atPath: tenants) {
            for name in (try? FileManager.default.contentsOfDirectory(atPath: "\(tenants)/\(tenant)/\(id)")) ?? [] where name.hasPrefix("tiles-") {
                try FileManager.default.removeItem(atPath: "\(tenants)/\(tenant)/\(id)/\(name)")
            }
        }
        let browser = try ViewerBrowser(harness)
        _ = try browser.signIn(harness.alpha)
        #expect(try browser.send("GET", "/app/panoramas/\(id)/tiles/0/f0_0.jpg").status == 404)
        try await waitUntil("the tiles made again", seconds: 60) {
            try browser.send("GET", "/app/panoramas/\(id)/tiles/0/f0_0.jpg").status == 200
        }
        #expect(try Self.tileSetsMade(harness) == 2)
        await harness.finish()
    }

    /// A panorama finished by a resumable upload is tiled as one sent whole.
    @Test func aResumableUploadsPanoramaIsTiledToo() async throws {
        let harness = try await ServiceHarness(alone: true) { $0.tileMinWidth = 1024 }
        let alpha = try harness.client(harness.alpha)
        let (_, floorId) = try alpha.makeFloor()
        let jpeg = try JPEGFixture.panorama(width: 2048)
        let id = newID()
        // Created with its whole body: finished in the one request.
        #expect(try alpha.tusCreate(panoramaId: id, floorId: floorId, length: jpeg.count, body: jpeg).status == 201)
        #expect(try alpha.send("GET", "/v1/panoramas/\(id)").status == 200)
        try await waitUntil("the tiles of the uploaded panorama", seconds: 60) { try Self.tileSetsMade(harness) == 1 }
        await harness.finish()
    }

    /// A panorama over the tiling's memory budget keeps its preview: the page draws that.
    @Test func aPanoramaOverTheTilingBudgetIsDrawnFromItsPreview() async throws {
        let harness = try await ServiceHarness(alone: true) {
            $0.tileMinWidth = 1024
            $0.maxTileDecodeBytes = 1 << 20 // a 2048 × 1024 JPEG's planes take 3 MiB
        }
        let alpha = try harness.client(harness.alpha)
        let (_, floorId) = try alpha.makeFloor()
        let id = newID()
        #expect(try alpha.putPanorama(id, floorId: floorId, bytes: try JPEGFixture.panorama(width: 2048), contentType: "image/jpeg").status == 201)
        try await waitUntil("the tiling tried and gave up", seconds: 60) {
            try alpha.send("GET", "/v1/panoramas/\(id)").string("state") == "ready" && Self.metric(harness, "toursd_tiles_waiting") == 0
        }
        let browser = try ViewerBrowser(harness)
        _ = try browser.signIn(harness.alpha)
        let page = try browser.send("GET", "/app/panoramas/\(id)").text
        #expect(page.contains("<canvas") && !page.contains("data-tiles") && page.contains("data-full=\"/app/panoramas/\(id)/preview?width=4096\""))
        #expect(try Self.metric(harness, "toursd_tiles_waiting") == 0 && Self.tileSetsMade(harness) == 0)
        await harness.finish()
    }

    private static func tileSetsMade(_ harness: ServiceHarness) throws -> Int? {
        try metric(harness, "toursd_tile_sets_made_total")
    }

    private static func metric(_ harness: ServiceHarness, _ name: String) throws -> Int? {
        try harness.metric(name)
    }
}

extension ServiceHarness {
    /// A whole-number line of /metrics (a gauge, a counter), or nil when it has none.
    func metric(_ name: String) throws -> Int? {
        let metrics = try daemonClient(nil).send("GET", "/metrics").text
        return metrics.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap { Int($0.split(separator: " ")[1]) }
    }
}
