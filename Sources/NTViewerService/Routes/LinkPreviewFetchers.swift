/// The programs that fetch a link pasted into a chat, a social network or a listing to show
/// its card: their fetch of a share link's page is no one looking at the tour, so it counts
/// no view (docs/api.md "Share statistics"). Told by the user agent each sends; iMessage sends
/// Facebook's and Twitter's names. Only names no app's own browser sends: a buyer who opens
/// the link inside LINE, Snapchat or Facebook is someone looking.
enum LinkPreviewFetchers {
    private static let names = ["facebookexternalhit", "facebot", "twitterbot", "slackbot", "whatsapp/", "telegrambot", "discordbot",
                                "linkedinbot", "skypeuripreview", "pinterestbot", "redditbot", "embedly", "iframely", "vkshare",
                                "mastodon/", "cardyb", "kakaotalk-scrap", "google-pagerenderer", "bingpreview", "applebot"]

    static func fetched(userAgent: String?) -> Bool {
        guard let userAgent, !userAgent.isEmpty else { return false }
        let lowered = userAgent.lowercased()
        return names.contains { lowered.contains($0) }
    }
}
