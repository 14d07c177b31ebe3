/// Names a stored file: a panorama's bytes, a floor's world map, a resumable upload's part.
struct BlobKey: Hashable, Sendable {
    enum Kind: String, Sendable, CaseIterable {
        case panorama = "panoramas"
        case worldMap = "worldmaps"
        /// The partial file of a resumable upload.
        case upload = "uploads"
    }

    var tenant: Int64
    var kind: Kind
    /// The file's name: a panorama's or upload's id; for a world map the name its floor row
    /// records (`worldMapFile`).
    var id: String
}
