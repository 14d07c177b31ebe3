import NTHTTPCore
import NTServiceModel
import NTServiceStorage
import NTTourUseCases

/// The IETF draft "Resumable Uploads for HTTP" (draft-ietf-httpbis-resumable-upload) marks a
/// request whose body is only part of the representation: `Upload-Incomplete: ?1` in its -01
/// (interop version 3), `Upload-Complete: ?0` from -02 on. iOS's URLSession sends these with
/// `Upload-Draft-Interop-Version`. Without a version served (`DraftVersion`), such a body is
/// refused: a 1,000-byte part must not be stored, counted and shown as a whole panorama. A request that
/// marks itself complete, or carries no mark, is a plain upload. Pure.
enum PartialUploadMarks {
    /// Throws 400 for a body marked as a part, or for a mark that is not a structured-field
    /// boolean (RFC 8941 §3.3.6).
    static func refuseParts(_ headers: HTTPHeaders) throws(ServiceError) {
        for (name, partWhen) in [("upload-incomplete", true), ("upload-complete", false)] {
            guard let value = headers[name] else { continue }
            guard let flag = StructuredField.boolean(value) else {
                throw .badRequest("\(name) must be a structured-field boolean, ?0 or ?1, not \(value.prefix(40))")
            }
            if flag == partWhen {
                throw .badRequest("this request marks its body as part of the upload (\(name): \(value.prefix(40))) "
                                  + "without an Upload-Draft-Interop-Version served (\(DraftVersion.servedList)): "
                                  + "send the whole image, or name a version served")
            }
        }
    }
}
