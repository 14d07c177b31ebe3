/// A response status code with its reason phrase (RFC 9110 §15).
public struct HTTPStatus: Sendable, Equatable, Hashable {
    public let code: Int
    public let reason: StaticString

    public init(_ code: Int, _ reason: StaticString) {
        self.code = code
        self.reason = reason
    }

    public static func == (lhs: HTTPStatus, rhs: HTTPStatus) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    /// 1xx, 204 and 304 responses never carry content (RFC 9110 §6.4.1).
    public var allowsContent: Bool { code >= 200 && code != 204 && code != 304 }

    public static let `continue` = HTTPStatus(100, "Continue")
    /// The IETF resumable-upload draft's interim answer: the upload can be resumed.
    public static let uploadResumptionSupported = HTTPStatus(104, "Upload Resumption Supported")
    public static let ok = HTTPStatus(200, "OK")
    public static let created = HTTPStatus(201, "Created")
    public static let noContent = HTTPStatus(204, "No Content")
    public static let partialContent = HTTPStatus(206, "Partial Content")
    public static let found = HTTPStatus(302, "Found")
    public static let seeOther = HTTPStatus(303, "See Other")
    public static let notModified = HTTPStatus(304, "Not Modified")
    public static let badRequest = HTTPStatus(400, "Bad Request")
    public static let unauthorized = HTTPStatus(401, "Unauthorized")
    public static let forbidden = HTTPStatus(403, "Forbidden")
    public static let notFound = HTTPStatus(404, "Not Found")
    public static let methodNotAllowed = HTTPStatus(405, "Method Not Allowed")
    public static let notAcceptable = HTTPStatus(406, "Not Acceptable")
    public static let requestTimeout = HTTPStatus(408, "Request Timeout")
    public static let conflict = HTTPStatus(409, "Conflict")
    public static let gone = HTTPStatus(410, "Gone")
    public static let lengthRequired = HTTPStatus(411, "Length Required")
    public static let preconditionFailed = HTTPStatus(412, "Precondition Failed")
    public static let contentTooLarge = HTTPStatus(413, "Content Too Large")
    public static let unsupportedMediaType = HTTPStatus(415, "Unsupported Media Type")
    public static let rangeNotSatisfiable = HTTPStatus(416, "Range Not Satisfiable")
    public static let expectationFailed = HTTPStatus(417, "Expectation Failed")
    public static let tooManyRequests = HTTPStatus(429, "Too Many Requests")
    public static let requestHeaderFieldsTooLarge = HTTPStatus(431, "Request Header Fields Too Large")
    public static let checksumMismatch = HTTPStatus(460, "Checksum Mismatch")
    public static let internalServerError = HTTPStatus(500, "Internal Server Error")
    public static let notImplemented = HTTPStatus(501, "Not Implemented")
    public static let serviceUnavailable = HTTPStatus(503, "Service Unavailable")
    public static let httpVersionNotSupported = HTTPStatus(505, "HTTP Version Not Supported")
    public static let insufficientStorage = HTTPStatus(507, "Insufficient Storage")
}
