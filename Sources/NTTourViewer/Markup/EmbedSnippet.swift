import NTFloorPlans

/// What an agent pastes into a listing's page to embed a share link: a frame that keeps the
/// view's 16:9 as the page narrows, and may go full screen and follow a phone's motion (the
/// `allow` a cross-origin frame needs for device orientation).
enum EmbedSnippet {
    static func html(embedURL: String) -> String {
        "<div style=\"position:relative;padding-top:56.25%\"><iframe src=\"\(MarkupEscaping.escape(embedURL))\" title=\"3D tour\" "
            + "allow=\"fullscreen; gyroscope; accelerometer\" allowfullscreen loading=\"lazy\" "
            + "style=\"position:absolute;inset:0;width:100%;height:100%;border:0\"></iframe></div>"
    }
}
