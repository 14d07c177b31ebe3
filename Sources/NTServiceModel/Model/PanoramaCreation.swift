import NTAPIModel

/// A panorama's creation, whichever protocol carries it (a one-shot PUT, tus, the IETF draft):
/// the panorama, where it goes and what it is, as its command parsed it once
/// (`CreationCommand`). Access is decided on this value and the use case stores the same.
package struct PanoramaCreation: Equatable, Sendable {
    package var panoramaId: String
    package var floorId: String
    package var roomId: String?
    package var position: PanoramaPosition?
    package var contentType: String
    package var declaredSHA256: String?

    package init(panoramaId: String, floorId: String, roomId: String?, position: PanoramaPosition?, contentType: String, declaredSHA256: String?) {
        self.panoramaId = panoramaId
        self.floorId = floorId
        self.roomId = roomId
        self.position = position
        self.contentType = contentType
        self.declaredSHA256 = declaredSHA256
    }
}

/// The row a resumable upload's creation opens: the creation as parsed, by whom, and its
/// length (for a draft upload whose length is not said yet, the most it may reach). The
/// creation's own fields read through (`wanted.panoramaId`).
@dynamicMemberLookup
package struct UploadRequest: Equatable, Sendable {
    package let creation: PanoramaCreation
    /// The grant whose holder asked for it (nil: a tenant token): revoking it ends the upload.
    package let grantId: String?
    package let length: Int64
    /// False for a draft upload whose length is not said yet.
    package let lengthKnown: Bool
    /// tus's `Upload-Metadata` as sent (HEAD answers it back); empty for the draft.
    package let metadataHeader: String
    /// A draft upload is complete when its client says so, not at its length.
    package let awaitsCompletion: Bool

    package init(creation: PanoramaCreation, grantId: String?, length: Int64, lengthKnown: Bool, metadataHeader: String, awaitsCompletion: Bool) {
        self.creation = creation
        self.grantId = grantId
        self.length = length
        self.lengthKnown = lengthKnown
        self.metadataHeader = metadataHeader
        self.awaitsCompletion = awaitsCompletion
    }

    package subscript<T>(dynamicMember field: KeyPath<PanoramaCreation, T>) -> T { creation[keyPath: field] }
}
