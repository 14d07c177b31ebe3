/// docs/api.md "Sharing a tour": a share link of one tour. `url` (`/t/…`) only in the answer that
/// made it: the secret is stored only as a hash and shown once.
public struct ShareDocument: JSONDocument, Equatable, Sendable {
    public var id: String
    public var tourId: String
    public var url: String?
    /// What its maker calls it ("Sent to the Millers"); nil: no label.
    public var label: String?
    public var createdAt: String
    public var expiresAt: String
    /// The origins whose pages may frame the link's embed form (`/t/…/embed`); none: no site may.
    public var frameAncestors: [String]
    /// Whether its visitors may fetch each panorama's full-size image (made again without the
    /// camera's metadata); else they see previews and tiles only.
    public var offersOriginals: Bool
    /// Whether its visitors may download the tour's floor plans (a PDF, branded as the link is).
    public var offersFloorPlans: Bool
    /// Whether its pages carry the tenant's branding (name, logo, accent, contact) and the
    /// platform's name where the operator shows it; else none of them (the MLS form).
    public var branded: Bool
    /// How often it was opened, and by how many visitors (counted per day: `ShareStatsDocument`).
    public var views: Int
    public var visitors: Int
    /// The time its visitors spent on its panoramas, as the viewer reported it.
    public var milliseconds: Int64

    public init(id: String, tourId: String, url: String?, label: String? = nil, createdAt: String, expiresAt: String,
                frameAncestors: [String] = [], offersOriginals: Bool = false, offersFloorPlans: Bool = false, branded: Bool = true, views: Int = 0,
                visitors: Int = 0, milliseconds: Int64 = 0) {
        self.id = id
        self.tourId = tourId
        self.url = url
        self.label = label
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.frameAncestors = frameAncestors
        self.offersOriginals = offersOriginals
        self.offersFloorPlans = offersFloorPlans
        self.branded = branded
        self.views = views
        self.visitors = visitors
        self.milliseconds = milliseconds
    }

    public init(_ value: JSONValue) throws(InvalidDocument) {
        let json = try Fields(value, context: "share")
        var origins: [String] = []
        for origin in try json.array("frameAncestors") {
            guard let text = origin.string else { throw InvalidDocument("frameAncestors must be an array of strings") }
            origins.append(text)
        }
        self.init(id: try json.string("id"), tourId: try json.string("tourId"), url: try json.optionalString("url"), label: try json.optionalString("label"),
                  createdAt: try json.string("createdAt"), expiresAt: try json.string("expiresAt"), frameAncestors: origins,
                  offersOriginals: try json.bool("offersOriginals"), offersFloorPlans: try json.optionalBool("offersFloorPlans") ?? false,
                  branded: try json.bool("branded"), views: try json.integer("views"),
                  visitors: try json.integer("visitors"), milliseconds: Int64(((try json.optionalNumber("seconds") ?? 0) * 1000).rounded()))
    }

    public func write(to writer: inout JSONWriter) {
        writer.object { writer in
            writer.key("branded"); writer.bool(branded)
            writer.key("createdAt"); writer.string(createdAt)
            writer.key("expiresAt"); writer.string(expiresAt)
            writer.key("frameAncestors"); writer.array(frameAncestors) { $0.string($1) }
            writer.key("id"); writer.string(id)
            writer.key("label"); writer.string(label)
            writer.key("offersFloorPlans"); writer.bool(offersFloorPlans)
            writer.key("offersOriginals"); writer.bool(offersOriginals)
            writer.key("tourId"); writer.string(tourId)
            writer.key("seconds"); writer.double(Double(milliseconds) / 1000)
            if let url { writer.key("url"); writer.string(url) }
            writer.key("views"); writer.int(views)
            writer.key("visitors"); writer.int(visitors)
        }
    }
}

/// The body of `POST /v1/tours/{tourId}/shares`: `{"expiresInSeconds": N, "label": "…",
/// "frameAncestors": [origin…], "offersOriginals": false, "offersFloorPlans": false, "branding": "branded"}`, every field optional: N within the
/// server's range (docs/api.md: 1 hour to 90 days by default; absent, the server's default, 30
/// days), a label as any name people read (`DisplayName`), at most `maxOrigins` origins.
public struct ShareInput: Equatable, Sendable {
    public var expiresInSeconds: Int
    public var label: String?
    public var frameAncestors: [String]
    public var offersOriginals: Bool
    public var offersFloorPlans: Bool
    /// `"branded"` (the default) or `"unbranded"`.
    public var branded: Bool

    public static func parse(_ bytes: [UInt8], allowed: ClosedRange<Int>, defaultSeconds: Int, maxOrigins: Int,
                             maxDepth: Int = JSONReader.defaultMaxDepth) throws(InvalidDocument) -> ShareInput {
        let json = try Fields.parse(bytes, maxDepth: maxDepth)
        var origins: [String] = []
        if let list = json["frameAncestors"], !list.isNull {
            guard let items = list.array else { throw InvalidDocument("frameAncestors must be an array of origins") }
            for item in items {
                guard let text = item.string else { throw InvalidDocument("frameAncestors must be an array of origins") }
                origins.append(text)
            }
        }
        let seconds: Int
        if let given = json["expiresInSeconds"], !given.isNull { seconds = try json.integer("expiresInSeconds") } else { seconds = defaultSeconds }
        let offers = try json.optionalBool("offersOriginals") ?? false
        let plans = try json.optionalBool("offersFloorPlans") ?? false
        let branded: Bool
        switch try json.optionalString("branding") {
        case nil, "branded": branded = true
        case "unbranded": branded = false
        default: throw InvalidDocument("branding must be \"branded\" or \"unbranded\"")
        }
        return try ShareInput(expiresInSeconds: seconds, label: try json.optionalString("label"), frameAncestors: origins, offersOriginals: offers,
                              offersFloorPlans: plans, branded: branded).validated(allowed, maxOrigins: maxOrigins)
    }

    public init(expiresInSeconds: Int, label: String? = nil, frameAncestors: [String] = [], offersOriginals: Bool = false, offersFloorPlans: Bool = false,
                branded: Bool = true) {
        self.expiresInSeconds = expiresInSeconds
        self.label = label
        self.frameAncestors = frameAncestors
        self.offersOriginals = offersOriginals
        self.offersFloorPlans = offersFloorPlans
        self.branded = branded
    }

    /// Checked, its label trimmed (a name people read: `DisplayName`) and its origins in their
    /// one spelling (lowercase, without duplicates).
    public func validated(_ allowed: ClosedRange<Int>, maxOrigins: Int) throws(InvalidDocument) -> ShareInput {
        guard allowed.contains(expiresInSeconds) else {
            throw InvalidDocument("expiresInSeconds must be \(allowed.lowerBound) to \(allowed.upperBound)")
        }
        let named: String?
        if let label { named = try DisplayName.validated(label, "label") } else { named = nil }
        guard frameAncestors.count <= maxOrigins else { throw InvalidDocument("frameAncestors holds at most \(maxOrigins) origins") }
        var origins: [String] = []
        for text in frameAncestors {
            let origin = try FrameAncestor.validated(text)
            if !origins.contains(origin) { origins.append(origin) }
        }
        return ShareInput(expiresInSeconds: expiresInSeconds, label: named, frameAncestors: origins, offersOriginals: offersOriginals,
                          offersFloorPlans: offersFloorPlans, branded: branded)
    }
}

/// An origin that may frame a share's embed, as a Content-Security-Policy `frame-ancestors`
/// source: `https://host[:port]` or `http://…`, the host a DNS name (its first label may be
/// `*`, for every subdomain) or an IPv4 address. Nothing else: no path, no quote, no space or
/// `;` (which would write another directive into the policy).
public enum FrameAncestor {
    public static func validated(_ text: String) throws(InvalidDocument) -> String {
        let origin = text.lowercased()
        let refused = InvalidDocument("frameAncestors: \"\(text.prefix(80))\" is not an origin like https://agency.example or https://*.agency.example:8443")
        guard origin.utf8.count <= 200 else { throw refused }
        let scheme: Substring
        if origin.hasPrefix("https://") { scheme = "https://" } else if origin.hasPrefix("http://") { scheme = "http://" } else { throw refused }
        let rest = origin.dropFirst(scheme.count)
        let parts = rest.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        if parts.count == 2 {
            guard parts[1].allSatisfy({ ("0"..."9").contains($0) }), let port = Int(parts[1]), (1...65_535).contains(port) else { throw refused }
        }
        let labels = parts[0].split(separator: ".", omittingEmptySubsequences: false)
        for (index, label) in labels.enumerated() {
            let wildcard = index == 0 && label == "*" && labels.count > 2
            let name = !label.isEmpty && label.count <= 63 && label.first != "-" && label.last != "-"
                && label.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" }
            guard wildcard || name else { throw refused }
        }
        return origin
    }
}

/// `GET /v1/shares/{shareId}/stats`: who looked at a link, counted without tracking anyone
/// (docs/security.md "Share statistics"). A visitor is counted once per day (the same person
/// on two days is two); seconds are what the viewer's beacons reported, within each visit's
/// bound.
public struct ShareStatsDocument: JSONDocument, Equatable, Sendable {
    public struct Day: Equatable, Sendable {
        /// UTC, `YYYY-MM-DD`.
        public var day: String
        public var views: Int
        public var visitors: Int
        public var milliseconds: Int64

        public init(day: String, views: Int, visitors: Int, milliseconds: Int64) {
            self.day = day
            self.views = views
            self.visitors = visitors
            self.milliseconds = milliseconds
        }
    }

    /// A panorama shown in `visits` visits, for `milliseconds` in all.
    public struct Panorama: Equatable, Sendable {
        public var panoramaId: String
        public var visits: Int
        public var milliseconds: Int64

        public init(panoramaId: String, visits: Int, milliseconds: Int64) {
            self.panoramaId = panoramaId
            self.visits = visits
            self.milliseconds = milliseconds
        }
    }

    public var shareId: String
    /// Newest first.
    public var days: [Day]
    /// The most watched first.
    public var panoramas: [Panorama]

    public init(shareId: String, days: [Day], panoramas: [Panorama]) {
        self.shareId = shareId
        self.days = days
        self.panoramas = panoramas
    }

    public var views: Int { days.reduce(0) { $0 + $1.views } }
    public var visitors: Int { days.reduce(0) { $0 + $1.visitors } }
    public var milliseconds: Int64 { days.reduce(0) { $0 + $1.milliseconds } }

    public func write(to writer: inout JSONWriter) {
        writer.object { writer in
            writer.key("days")
            writer.array(days) { writer, day in
                writer.object { writer in
                    writer.key("day"); writer.string(day.day)
                    writer.key("seconds"); writer.double(Double(day.milliseconds) / 1000)
                    writer.key("views"); writer.int(day.views)
                    writer.key("visitors"); writer.int(day.visitors)
                }
            }
            writer.key("panoramas")
            writer.array(panoramas) { writer, panorama in
                writer.object { writer in
                    writer.key("panoramaId"); writer.string(panorama.panoramaId)
                    writer.key("seconds"); writer.double(Double(panorama.milliseconds) / 1000)
                    writer.key("visits"); writer.int(panorama.visits)
                }
            }
            writer.key("seconds"); writer.double(Double(milliseconds) / 1000)
            writer.key("shareId"); writer.string(shareId)
            writer.key("views"); writer.int(views)
            writer.key("visitors"); writer.int(visitors)
        }
    }
}

/// What the viewer reports of a visit (`POST /t/{secret}/visits/{visitId}`, by
/// `navigator.sendBeacon`): `{"panoramaId": "…", "seconds": 12.5}`, the time the panorama has
/// been on screen in this visit so far (it only grows).
public struct VisitBeacon: Equatable, Sendable {
    public var panoramaId: String
    public var milliseconds: Int64

    public static func parse(_ bytes: [UInt8], maxDepth: Int = JSONReader.defaultMaxDepth) throws(InvalidDocument) -> VisitBeacon {
        let json = try Fields.parse(bytes, maxDepth: maxDepth)
        let id = try json.string("panoramaId")
        guard Identifier.isValid(id) else { throw InvalidDocument("panoramaId must be a UUID") }
        guard let seconds = try json.optionalNumber("seconds"), seconds >= 0, seconds <= 86_400 * 366 else {
            throw InvalidDocument("seconds must be a number from 0")
        }
        return VisitBeacon(panoramaId: id, milliseconds: Int64((seconds * 1000).rounded()))
    }

    public init(panoramaId: String, milliseconds: Int64) {
        self.panoramaId = panoramaId
        self.milliseconds = milliseconds
    }
}
