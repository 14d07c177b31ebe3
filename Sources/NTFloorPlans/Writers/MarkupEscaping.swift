/// Text put into HTML or XML (the viewer's pages, a floor plan's SVG): the same five characters
/// escaped for both.
public enum MarkupEscaping {
    /// The five characters that could end an element's text or a quoted attribute value, or
    /// start markup, as character references (HTML §13.1.4). Everything else passes as is.
    public static func escape(_ value: String) -> String {
        guard value.utf8.contains(where: { $0 == 0x26 || $0 == 0x3C || $0 == 0x3E || $0 == 0x22 || $0 == 0x27 }) else { return value }
        var result = ""
        result.reserveCapacity(value.utf8.count + 16)
        for character in value.unicodeScalars {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&#39;"
            default: result.unicodeScalars.append(character)
            }
        }
        return result
    }
}
