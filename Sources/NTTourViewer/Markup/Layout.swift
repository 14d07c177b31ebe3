import NTAPIModel
import NTFloorPlans

/// Where one view of the tours lives: the signed-in app under `/app`, or one tour under its
/// share link `/t/{secret}` (read-only; its root is the property page).
public struct ViewerPaths: Sendable, Equatable {
    public let base: String
    public let isShare: Bool
    /// A share link's embed form (`/t/{secret}/embed/…`): its panoramas link to their embed form.
    public let isEmbed: Bool

    public static let app = ViewerPaths(base: "/app", isShare: false, isEmbed: false)

    public static func share(secret: String) -> ViewerPaths {
        ViewerPaths(base: "/t/" + secret, isShare: true, isEmbed: false)
    }

    /// The same share link's embed form.
    public var embedded: ViewerPaths { ViewerPaths(base: base, isShare: isShare, isEmbed: isShare) }

    /// What a share link's path gets to be its embed form.
    public static let embedSuffix = "/embed"

    public static let list = "/app/"
    public static let signIn = "/app/login"
    public static let signOut = "/app/logout"
    public static let style = "/app/static/style.css"
    public static let script = "/app/static/viewer.js"
    public static let icon = "/app/static/icon.svg"

    public func property(_ id: String) -> String { isShare ? base : base + "/properties/" + id }
    public func floor(_ id: String) -> String { base + "/floors/" + id }
    public func room(_ id: String) -> String { base + "/rooms/" + id }
    public func panorama(_ id: String) -> String { base + (isEmbed ? Self.embedSuffix : "") + "/panoramas/" + id }
    public func preview(_ id: String, width: Int) -> String { base + "/panoramas/" + id + "/preview?width=" + String(width) }
    public func image(_ id: String) -> String { base + "/panoramas/" + id + "/image" }
    /// Where a panorama's tiles are: `{level}/{face}{row}_{column}.jpg` below it.
    public func tiles(_ id: String) -> String { base + "/panoramas/" + id + "/tiles/" }
    /// A floor's published plan, in `format`.
    public func floorPlan(floor id: String, _ format: FloorPlanFormat) -> String { base + "/floors/" + id + "/floor-plan." + format.rawValue }
    /// The home's published plans, a PDF.
    public func floorPlans(property id: String) -> String { (isShare ? base : base + "/properties/" + id) + "/floor-plan.pdf" }
}

/// A tenant's branding as a branded share link's pages show it: the name in the bar, its logo
/// beside it, its accent colour (a style sheet of its own: the pages' policy allows no inline
/// style), and its contact lines in the panel.
public struct PageBrand: Sendable, Equatable {
    public var name: String?
    /// The logo's URL; nil: none.
    public var logo: String?
    /// The accent's style sheet's URL; nil: the platform's colour.
    public var style: String?
    public var contact: [String]

    public init(name: String?, logo: String?, style: String?, contact: [String]) {
        self.name = name
        self.logo = logo
        self.style = style
        self.contact = contact
    }

    /// The accent's style sheet (`:root { --accent: … }`), the colour checked to be `#rrggbb`.
    public static func styleSheet(accent: String) -> [UInt8] {
        Array(":root { --accent: \(accent); }\n".utf8)
    }
}

/// What every page of one request shares: where its links go, the subtitle line, and the
/// signed-in session's CSRF token (nil: not signed in, or a share link: no forms).
public struct PageFrame: Sendable {
    public var paths: ViewerPaths
    public var subtitle: String?
    public var csrf: String?
    /// What the pages measure in: the visitor's choice, else the agency's.
    public var units: MeasureUnits
    /// How high above its floor a panorama's camera stands when its capture did not say
    /// (`panoramaHeightMetres`): the dollhouse's projections and the viewer's markers.
    public var panoramaHeight: Double = 1.5
    /// Whether a panorama's page links its full-size image: always in the app; under a share
    /// link, when the link offers it.
    public var offersOriginals: Bool
    /// Whether a share link's panel offers the home's floor plans to download.
    public var offersFloorPlans = false
    /// The name in the bar and after each title: the app's own; under a share link, the
    /// operator's choice or none.
    public var platformName: String?
    /// Where the viewer reports the visit's time (a share link's opening; `data-visit`).
    public var visit: String?
    /// A branded share link's branding; nil: none (the app, an unbranded link, a tenant without).
    public var brand: PageBrand?
    /// What a chat or a listing shows of a pasted share link; nil: no such tags (the app).
    public var linkPreview: LinkPreview?

    /// The signed-in app's name.
    public static let appName = "NoughtyTours"

    public init(paths: ViewerPaths, subtitle: String?, csrf: String?, units: MeasureUnits = .metric, offersOriginals: Bool = true,
                platformName: String? = PageFrame.appName) {
        self.paths = paths
        self.subtitle = subtitle
        self.csrf = csrf
        self.units = units
        self.offersOriginals = offersOriginals
        self.platformName = platformName
    }
}

/// One step of the trail above a page's title.
struct Crumb {
    var label: String
    var url: String
}

/// A share link as a chat app, a social network or a listing site shows it once pasted: the
/// Open Graph tags (ogp.me) and Twitter's card, which Slack, WhatsApp, iMessage, Facebook and
/// LinkedIn read too. Every URL absolute, as the tags require.
public struct LinkPreview: Sendable, Equatable {
    public var title: String
    public var description: String
    /// The page's own URL.
    public var url: String
    /// The picture: the cover panorama made again from its pixels, `imageWidth` wide (a 2:1
    /// panorama's is 1260 × 630); nil for a tour without panoramas.
    public var image: String?

    /// A 2:1 panorama this wide is at least the 1200 × 630 large cards ask for.
    public static let imageWidth = 1260

    public init(title: String, description: String, url: String, image: String?) {
        self.title = title
        self.description = description
        self.url = url
        self.image = image
    }

    func write(to page: inout HTMLWriter) {
        var tags = [("property", "og:type", "website"), ("property", "og:title", title), ("property", "og:description", description),
                    ("property", "og:url", url), ("name", "twitter:card", image == nil ? "summary" : "summary_large_image"),
                    ("name", "twitter:title", title), ("name", "twitter:description", description)]
        if let image {
            tags += [("property", "og:image", image), ("property", "og:image:type", "image/jpeg"), ("name", "twitter:image", image)]
        }
        for (attribute, name, content) in tags {
            if attribute == "property" { page.raw("<meta property=\"") } else { page.raw("<meta name=\"") }
            page.text(name)
            page.raw("\" content=\"")
            page.text(content)
            page.raw("\">")
        }
    }
}

/// The frame around every page: head, bar, trail.
enum Layout {
    /// `immersive`: a panorama's page, whose view fills the window with the rest over it where
    /// scripts run (`body.tour`; `body.tour.visitor` under a share link); it writes its own trail.
    static func page(_ frame: PageFrame, title: String, crumbs: [Crumb] = [], script: Bool = false, immersive: Bool = false,
                     _ body: (inout HTMLWriter) -> Void) -> [UInt8] {
        var page = HTMLWriter()
        head(&page, title: title, frame, script: script)
        page.raw("</head><body")
        if immersive { page.raw(frame.paths.isShare ? " class=\"tour visitor\"" : " class=\"tour\"") }
        bodyData(&page, frame)
        page.raw("><header class=\"bar\"><div class=\"brand\">")
        if frame.paths.isShare {
            if let brand = frame.brand {
                if let logo = brand.logo {
                    page.raw("<img class=\"logo\" src=\"")
                    page.text(logo)
                    page.raw("\" alt=\"")
                    page.text(brand.name ?? "")
                    page.raw("\">")
                }
                if let name = brand.name { page.element("<span class=\"name\">", name, "</span>") }
            } else if let name = frame.platformName {
                page.text(name)
            }
        } else {
            page.link(ViewerPaths.list, frame.platformName ?? PageFrame.appName)
        }
        if let subtitle = frame.subtitle, !subtitle.isEmpty {
            page.element("<span class=\"subtitle\">", subtitle, "</span>")
        }
        page.raw("</div>")
        if let csrf = frame.csrf {
            page.raw("<form method=\"post\" action=\"")
            page.text(ViewerPaths.signOut)
            page.raw("\" class=\"signout\">")
            page.hidden("csrf", csrf)
            page.raw("<button type=\"submit\">Sign out</button></form>")
        } else if frame.paths.isShare {
            page.raw("<span class=\"shared\">Shared tour · read-only</span>")
        }
        page.raw("</header><main>")
        writeCrumbs(&page, crumbs)
        body(&page)
        page.raw("</main></body></html>")
        return page.bytes
    }

    /// The trail above a page's title, a separator between its steps (none after the last:
    /// the title below is the page); nothing for none.
    static func writeCrumbs(_ page: inout HTMLWriter, _ crumbs: [Crumb]) {
        guard !crumbs.isEmpty else { return }
        page.raw("<nav class=\"crumbs\" aria-label=\"Trail\">")
        for (index, crumb) in crumbs.enumerated() {
            if index > 0 { page.raw("<span class=\"sep\">›</span>") }
            page.link(crumb.url, crumb.label)
        }
        page.raw("</nav>")
    }

    /// A share link's embed form: the page without the bar and the trail, for another site's
    /// frame, immersive as a panorama's page (`body.tour`) at any frame's size.
    static func embed(title: String, _ frame: PageFrame, _ body: (inout HTMLWriter) -> Void) -> [UInt8] {
        var page = HTMLWriter()
        head(&page, title: title, frame, script: true)
        page.raw("</head><body class=\"embed tour\"")
        bodyData(&page, frame)
        page.raw("><main class=\"embed\">")
        body(&page)
        page.raw("</main></body></html>")
        return page.bytes
    }

    /// What the body tells the script: where the tour's panorama pages are (`data-panoramas`: a
    /// deep link naming a panorama in its fragment, opened on another page of the tour, goes
    /// there), and where a share link's visit is reported (`data-visit`).
    private static func bodyData(_ page: inout HTMLWriter, _ frame: PageFrame) {
        page.raw(" data-panoramas=\"")
        page.text(frame.paths.panorama(""))
        page.raw("\"")
        if let visit = frame.visit {
            page.raw(" data-visit=\"")
            page.text(visit)
            page.raw("\"")
        }
    }

    /// The document's start up to the end of its head's own elements.
    /// The title names the brand where the link shows one, else the platform where it is named.
    private static func head(_ page: inout HTMLWriter, title: String, _ frame: PageFrame, script: Bool) {
        page.raw("<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">")
        page.raw("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>")
        page.text(title)
        if let name = frame.brand?.name ?? frame.platformName { page.text(" · " + name) }
        page.raw("</title>")
        frame.linkPreview?.write(to: &page)
        page.raw("<link rel=\"icon\" href=\"")
        page.text(ViewerPaths.icon)
        page.raw("\"><link rel=\"stylesheet\" href=\"")
        page.text(ViewerPaths.style)
        page.raw("\">")
        if let style = frame.brand?.style {
            page.raw("<link rel=\"stylesheet\" href=\"")
            page.text(style)
            page.raw("\">")
        }
        if script {
            page.raw("<script src=\"")
            page.text(ViewerPaths.script)
            page.raw("\" defer></script>")
        }
    }
}

/// Numbers and sizes as the pages print them.
enum Format {
    static func count(_ value: Int, _ one: String, _ many: String) -> String {
        "\(value) \(value == 1 ? one : many)"
    }

    /// Bytes in binary units with one decimal: "12.4 MB".
    static func bytes(_ value: Int64) -> String {
        let units = ["bytes", "KB", "MB", "GB", "TB"]
        var amount = Double(value)
        var unit = 0
        while amount >= 1024, unit < units.count - 1 {
            amount /= 1024
            unit += 1
        }
        return unit == 0 ? "\(value) bytes" : "\(Numerals.decimal(amount, places: 1)) \(units[unit])"
    }

    /// An RFC 3339 timestamp as "2026-12-01 05:22 UTC".
    static func time(_ timestamp: String) -> String {
        let characters = Array(timestamp)
        guard characters.count >= 16, characters[10] == "T" else { return timestamp }
        return String(characters[0..<10]) + " " + String(characters[11..<16]) + " UTC"
    }

    /// A time spent as people say it: "45 s", "1 min 8 s", "2 h 5 min".
    static func duration(milliseconds: Int64) -> String {
        let seconds = max(0, milliseconds) / 1000
        if seconds < 60 { return "\(seconds) s" }
        if seconds < 3600 { return "\(seconds / 60) min" + (seconds % 60 == 0 ? "" : " \(seconds % 60) s") }
        return "\(seconds / 3600) h" + ((seconds % 3600) / 60 == 0 ? "" : " \((seconds % 3600) / 60) min")
    }

    /// An RFC 3339 timestamp's day as people write it: "3 Dec 2026" (UTC).
    static func day(_ timestamp: String) -> String {
        let parts = timestamp.prefix(10).split(separator: "-")
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        guard parts.count == 3, let month = Int(parts[1]), (1...12).contains(month), let day = Int(parts[2]) else { return timestamp }
        return "\(day) \(months[month - 1]) \(parts[0])"
    }
}
