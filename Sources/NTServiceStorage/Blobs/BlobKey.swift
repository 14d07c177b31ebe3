import NTServiceModel

/// Names a stored file: a panorama's bytes, a floor's world map, a resumable upload's part.
package struct BlobKey: Hashable, Sendable {
    package enum Kind: String, Sendable, CaseIterable {
        case panorama = "panoramas"
        case worldMap = "worldmaps"
        /// The partial file of a resumable upload.
        case upload = "uploads"
    }

    package var tenant: Int64
    package var kind: Kind
    /// The file's name: a panorama's or upload's id; for a world map the name its floor row
    /// records (`worldMapFile`).
    package var id: String

    package init(tenant: Int64, kind: Kind, id: String) {
        self.tenant = tenant
        self.kind = kind
        self.id = id
    }
}
