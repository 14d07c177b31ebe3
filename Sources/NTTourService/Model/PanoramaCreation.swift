import NTAPIModel

/// A panorama's creation, whichever protocol carries it (a one-shot PUT, tus, the IETF draft):
/// the panorama, where it goes and what it is, as its command parsed it once
/// (`CreationCommand`). Access is decided on this value and the use case stores the same.
struct PanoramaCreation: Equatable, Sendable {
    var panoramaId: String
    var floorId: String
    var roomId: String?
    var position: PanoramaPosition?
    var contentType: String
    var declaredSHA256: String?
}

/// The row a resumable upload's creation opens: the creation as parsed, by whom, and its
/// length (for a draft upload whose length is not said yet, the most it may reach). The
/// creation's own fields read through (`wanted.panoramaId`).
@dynamicMemberLookup
struct UploadRequest: Equatable, Sendable {
    let creation: PanoramaCreation
    /// The grant whose holder asked for it (nil: a tenant token): revoking it ends the upload.
    let grantId: String?
    let length: Int64
    /// False for a draft upload whose length is not said yet.
    let lengthKnown: Bool
    /// tus's `Upload-Metadata` as sent (HEAD answers it back); empty for the draft.
    let metadataHeader: String
    /// A draft upload is complete when its client says so, not at its length.
    let awaitsCompletion: Bool

    subscript<T>(dynamicMember field: KeyPath<PanoramaCreation, T>) -> T { creation[keyPath: field] }
}
