import HTTPCore

/// The IETF draft "Resumable Uploads for HTTP" (draft-ietf-httpbis-resumable-upload) marks a
/// request whose body is only part of the representation: `Upload-Incomplete: ?1` in its -01
/// (interop version 3), `Upload-Complete: ?0` from -02 on. iOS's URLSession sends these with
/// `Upload-Draft-Interop-Version`. Until the draft's protocol is served, such a body is refused:
/// a 1,000-byte part must not be stored, counted and shown as a whole panorama. A request that
/// marks itself complete, or carries no mark, is a plain upload. Pure.
enum PartialUploadMarks {
    /// Throws 400 for a body marked as a part, or for a mark that is not a structured-field
    /// boolean (RFC 8941 §3.3.6).
    static func refuseParts(_ headers: HTTPHeaders) throws(ServiceError) {
        for (name, partWhen) in [("upload-incomplete", true), ("upload-complete", false)] {
            guard let value = headers[name] else { continue }
            guard let flag = boolean(value) else {
                throw .badRequest("\(name) must be a structured-field boolean, ?0 or ?1, not \(value.prefix(40))")
            }
            if flag == partWhen {
                throw .badRequest("this request marks its body as part of the upload (\(name): \(value.prefix(40))); "
                                  + "resumable uploads of the IETF draft are not served yet: send the whole image, or use tus (POST /v1/uploads)")
            }
        }
    }

    /// An RFC 8941 boolean item, its parameters allowed: `?1` true, `?0` false, else nil.
    static func boolean(_ value: String) -> Bool? {
        let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        let item = value.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false)[0].drop(while: blank).reversed().drop(while: blank)
        switch String(item.reversed()) {
        case "?1": return true
        case "?0": return false
        default: return nil
        }
    }
}
