import NTHTTPCore
import NTLogging
import NTServiceHTTP
import NTServiceModel
import NTServiceStorage
import NTTourUseCases

/// The IETF draft "Resumable Uploads for HTTP" (draft-ietf-httpbis-resumable-upload) as each
/// interop version served spells it. A client names its version in every request
/// (`Upload-Draft-Interop-Version`); the answers follow that version's text. Pure: what a
/// request's fields say, and which fields an answer carries.
///
/// | version | draft | what it changed |
/// |---|---|---|
/// | 3 | -01 | `Upload-Incomplete` marks a part; HEAD answers 204 |
/// | 5 | -03 | `Upload-Complete`; a completing request's Content-Length is the length, a mismatch 400 |
/// | 6 | -04, -05 | PATCH is `application/partial-upload`; `Upload-Length`; `Upload-Limit`; problem details |
/// | 7 | -06 to -08 | every PATCH says `Upload-Complete`; a 409 carries the offset and `Upload-Complete: ?0`; the final answer is the target's own |
/// | 8 | -09 on | the 104 and HEAD carry `Upload-Limit` where limits exist |
enum DraftVersion: Int, CaseIterable, Sendable {
    case v3 = 3, v5 = 5, v6 = 6, v7 = 7, v8 = 8

    static let headerName = "upload-draft-interop-version"
    /// The versions served, as an error names them: "3, 5, 6, 7, 8".
    static let servedList = allCases.map { String($0.rawValue) }.joined(separator: ", ")

    /// What `Upload-Draft-Interop-Version` asks: absent (a plain request), a version served,
    /// or one that is not (answered as a plain upload: no 104, RFC text §"Draft Version
    /// Identification").
    enum Asked: Equatable {
        case none
        case served(DraftVersion)
        case unknown(String)
    }

    static func asked(_ headers: HTTPHeaders) -> Asked {
        guard let value = headers[headerName] else { return .none }
        guard let number = StructuredField.integer(value), let version = DraftVersion(rawValue: Int(number)) else {
            return .unknown(String(value.prefix(20)))
        }
        return .served(version)
    }

    /// The field that says whether an upload is complete: -01's inverted `Upload-Incomplete`,
    /// then `Upload-Complete`.
    var completenessField: String { self == .v3 ? "Upload-Incomplete" : "Upload-Complete" }

    /// Whether this request's content ends the upload: nil when it does not say.
    func completes(_ headers: HTTPHeaders) throws(ServiceError) -> Bool? {
        let name = completenessField.lowercased()
        guard let value = headers[name] else { return nil }
        guard let flag = StructuredField.boolean(value) else {
            throw .badRequest("\(completenessField) must be a structured-field boolean, ?0 or ?1, not \(value.prefix(40))")
        }
        return self == .v3 ? !flag : flag
    }

    /// The completeness field of an answer.
    func completeness(_ complete: Bool) -> HTTPField {
        HTTPField(name: completenessField, value: (self == .v3 ? !complete : complete) ? "?1" : "?0")
    }

    /// An append must say whether it completes the upload (-06 on); before, saying nothing
    /// meant it did.
    var appendMustSayCompleteness: Bool { rawValue >= 7 }
    /// `Upload-Length` is a field of requests and HEAD answers (-04 on).
    var hasUploadLength: Bool { rawValue >= 6 }
    /// An append's body is `application/partial-upload` (-04 on).
    var appendNeedsPartialUploadType: Bool { rawValue >= 6 }
    /// `Upload-Limit` in the 104, the creation's answer and HEAD (-04 may, -09 must).
    var hasUploadLimit: Bool { rawValue >= 6 }
    /// Refusals that the draft gives a problem type are `application/problem+json` (-04 on).
    var hasProblemTypes: Bool { rawValue >= 6 }
    /// An append that is not the last is answered 204 (-06 on); before, 201.
    var incompleteAppendStatus: HTTPStatus { rawValue >= 7 ? .noContent : .created }
    /// The answer that completes the upload is the target resource's own, with
    /// `Upload-Complete: ?1` and without `Upload-Offset` (-06 on).
    var finalAnswerIsTargets: Bool { rawValue >= 7 }
    /// A length past the one recorded also ends the upload (-06 on: "marking the upload
    /// resource invalid").
    var overrunInvalidates: Bool { rawValue >= 7 }

    /// Fields a HEAD or DELETE must not carry (400): offsets and completeness, and from -04
    /// on the length; -06 dropped the rule.
    var fieldsRefusedOnRetrieval: [String] {
        guard rawValue < 7 else { return [] }
        return ["Upload-Offset", completenessField] + (hasUploadLength ? ["Upload-Length"] : [])
    }
}

/// The limits toursd applies to a draft upload, as `Upload-Limit` says them (-04's
/// `max-size`; -06's `max-age`, the seconds left).
struct DraftUploadLimits: Equatable {
    var maxSize: Int64
    var secondsLeft: Int64?

    func field(for version: DraftVersion) -> HTTPField? {
        guard version.hasUploadLimit else { return nil }
        var value = "max-size=\(maxSize)"
        if version.rawValue >= 7, let secondsLeft { value += ", max-age=\(max(0, secondsLeft))" }
        return HTTPField(name: "Upload-Limit", value: value)
    }
}

/// What a request says of the upload's length (draft -03 on): a completing request's
/// Content-Length added to its offset, and `Upload-Length`. Both given must agree, and agree
/// with a length recorded before (400, "inconsistent-upload-length").
enum DraftLength {
    static func declared(_ version: DraftVersion, headers: HTTPHeaders, contentLength: Int64?, offset: Int64,
                         completes: Bool) throws(ServiceError) -> Int64? {
        var lengths: [Int64] = []
        if version.hasUploadLength, let value = headers["upload-length"] {
            guard let length = StructuredField.integer(value), length >= 0 else {
                throw .badRequest("Upload-Length must be a non-negative integer")
            }
            lengths.append(length)
        }
        if version.rawValue >= 5, completes, let contentLength { lengths.append(offset + contentLength) }
        guard let first = lengths.first else { return nil }
        guard lengths.allSatisfy({ $0 == first }) else {
            throw DraftProblem.inconsistentLength.error("Upload-Length and the completing request's length disagree")
        }
        return first
    }
}

/// The draft's problem types (RFC 9457), used from -04 on.
enum DraftProblem: String {
    case mismatchingOffset = "mismatching-upload-offset"
    case completedUpload = "completed-upload"
    case inconsistentLength = "inconsistent-upload-length"

    var type: String { "https://iana.org/assignments/http-problem-types#\(rawValue)" }

    /// The service error behind the problem (its status and code, mapped in one place).
    func error(_ message: String) -> ServiceError {
        switch self {
        case .mismatchingOffset: return ServiceError(.offsetMismatch, message)
        case .completedUpload, .inconsistentLength: return ServiceError(.badRequest, message)
        }
    }
}

/// RFC 8941 items as the draft's fields use them.
enum StructuredField {
    /// An Integer item (§3.3.1, at most 15 digits), its parameters allowed; nil otherwise.
    static func integer(_ value: String) -> Int64? {
        let item = bareItem(value)
        let digits = item.hasPrefix("-") ? item.dropFirst() : item[...]
        guard !digits.isEmpty, digits.count <= 15, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int64(item)
    }

    /// A Boolean item (§3.3.6), its parameters allowed: `?1` true, `?0` false, else nil.
    static func boolean(_ value: String) -> Bool? {
        switch bareItem(value) {
        case "?1": return true
        case "?0": return false
        default: return nil
        }
    }

    /// The item without its parameters and surrounding blanks.
    private static func bareItem(_ value: String) -> String {
        let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        let item = value.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false)[0]
        return String(item.drop(while: blank).reversed().drop(while: blank).reversed())
    }
}

/// A draft request refused, with what its answer tells of the upload: the offset it holds
/// (the draft: "MUST send the Upload-Offset … when the response is a failure"), whether it
/// is complete, and the problem type the draft gives the refusal.
struct DraftRefusal: Error {
    var error: ServiceError
    var problem: DraftProblem?
    /// The upload's offset, when it is active.
    var offset: Int64?
    /// The offset the request named (a mismatch's `provided-offset`).
    var providedOffset: Int64?
    var uploadComplete = false
}

/// The answers of the draft's procedures, field by field as each version has them. Pure.
enum DraftAnswers {
    /// The `104 Upload Resumption Supported` of a creation: the version, where to resume, the
    /// limits.
    static func interim(_ version: DraftVersion, location: String, limits: DraftUploadLimits) -> [HTTPField] {
        [HTTPField(name: "Upload-Draft-Interop-Version", value: String(version.rawValue)), HTTPField(name: "Location", value: location)]
            + [limits.field(for: version)].compactMap { $0 }
    }

    /// A creation or append that did not end the upload: the offset now, and `?0`.
    /// `location`: a creation's (with its limits).
    static func incomplete(_ version: DraftVersion, offset: Int64, location: String?, limits: DraftUploadLimits) -> Response {
        var headers = [HTTPField(name: "Upload-Offset", value: String(offset)), version.completeness(false)]
        if let location {
            headers.insert(HTTPField(name: "Location", value: location), at: 0)
            if let limit = limits.field(for: version) { headers.append(limit) }
        }
        return Response(status: location != nil ? .created : version.incompleteAppendStatus, headers: headers)
    }

    /// The request that completed the upload: the target's own answer (`target`, the
    /// panorama), said complete; before -06 also with the offset of the whole upload.
    static func completed(_ version: DraftVersion, _ target: Response, length: Int64, location: String?) -> Response {
        var answer = target
        if let location { answer.headers.append(HTTPField(name: "Location", value: location)) }
        if !version.finalAnswerIsTargets { answer.headers.append(HTTPField(name: "Upload-Offset", value: String(length))) }
        answer.headers.append(version.completeness(true))
        return answer
    }

    /// Offset retrieval (HEAD): 204 with the offset, completeness, length (-04 on, when
    /// known) and limits, never cached.
    static func offset(_ version: DraftVersion, offset: Int64, complete: Bool, length: Int64?, limits: DraftUploadLimits) -> Response {
        var headers = [HTTPField(name: "Upload-Offset", value: String(offset)), version.completeness(complete)]
        if version.hasUploadLength, let length { headers.append(HTTPField(name: "Upload-Length", value: String(length))) }
        if !complete, let limit = limits.field(for: version) { headers.append(limit) }
        headers.append(HTTPField(name: "Cache-Control", value: "no-store"))
        return Response(status: .noContent, headers: headers)
    }

    /// A refusal: the service's error answer (its status and code, `ServiceError.httpError`),
    /// with the upload's offset and, from -06 on, its completeness; from -04 on, a problem
    /// type's refusal is `application/problem+json` (RFC 9457) carrying the code and message too.
    static func refusal(_ refusal: DraftRefusal, _ version: DraftVersion) -> Response {
        let error = refusal.error.httpError
        var answer = Response.error(error)
        if let offset = refusal.offset { answer.headers.append(HTTPField(name: "Upload-Offset", value: String(offset))) }
        if version.finalAnswerIsTargets { answer.headers.append(version.completeness(refusal.uploadComplete)) }
        guard version.hasProblemTypes, let problem = refusal.problem else { return answer }
        var members: [(String, String)] = [("type", jsonString(problem.type)), ("title", jsonString(error.message)),
                                           ("status", String(error.status.code)), ("code", jsonString(error.code))]
        if problem == .mismatchingOffset, let expected = refusal.offset, let provided = refusal.providedOffset {
            members += [("expected-offset", String(expected)), ("provided-offset", String(provided))]
        }
        let body = "{" + members.map { "\(jsonString($0.0)):\($0.1)" }.joined(separator: ",") + "}"
        answer.contentType = "application/problem+json"
        answer.body = .bytes(Array(body.utf8))
        return answer
    }

    private static func jsonString(_ text: String) -> String {
        var bytes: [UInt8] = []
        bytes.append(jsonString: text)
        return String(decoding: bytes, as: UTF8.self)
    }
}
