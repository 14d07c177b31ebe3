import NTFloorPlans

/// Builds an HTML page. Markup goes in with `raw` (only ever literals of this module); every
/// value from outside (names, ids, dates: anything a client or the database supplied) goes in
/// through `text`, which escapes it for element content and quoted attribute values alike.
struct HTMLWriter {
    private(set) var html = ""

    init(capacity: Int = 8192) {
        html.reserveCapacity(capacity)
    }

    mutating func raw(_ markup: StaticString) {
        html += markup.description
    }

    mutating func text(_ value: String) {
        html += MarkupEscaping.escape(value)
    }

    mutating func text(_ value: Int) {
        html += String(value)
    }

    /// `<tag class="…">value</tag>` for a value from outside.
    mutating func element(_ open: StaticString, _ value: String, _ close: StaticString) {
        raw(open)
        text(value)
        raw(close)
    }

    /// `<a href="url">label</a>`, both escaped.
    mutating func link(_ url: String, _ label: String, class name: StaticString? = nil) {
        raw("<a href=\"")
        text(url)
        if let name {
            raw("\" class=\"")
            raw(name)
        }
        raw("\">")
        text(label)
        raw("</a>")
    }

    /// A hidden form field.
    mutating func hidden(_ name: StaticString, _ value: String) {
        raw("<input type=\"hidden\" name=\"")
        raw(name)
        raw("\" value=\"")
        text(value)
        raw("\">")
    }

    var bytes: [UInt8] { Array(html.utf8) }
}
