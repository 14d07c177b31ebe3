@testable import NTHTTPCore
import Testing
@testable import NTServiceModel
@testable import NTServiceStorage
@testable import NTUploads

/// The IETF resumable-upload draft, version by version, without a server: what a request's
/// fields say and what each answer carries, checked against the drafts' text.
@Suite struct ResumableDraftTests {
    /// The fields as a request head carries them (decoded as the server decodes one).
    static func headers(_ fields: [String: String]) -> HTTPHeaders {
        let text = "HEAD / HTTP/1.1\r\nHost: t\r\n" + fields.map { "\($0.key): \($0.value)\r\n" }.joined() + "\r\n"
        var decoder = RequestDecoder(maxHeadBytes: 8192)
        let bytes = Array(text.utf8)
        guard case .head(let head)? = try? bytes.withUnsafeBytes({ try decoder.next($0) }).event else {
            preconditionFailure("not a head: \(text)")
        }
        return head.headers
    }

    static func field(_ response: Response, _ name: String) -> String? {
        response.headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    @Test func theVersionAskedIsServedUnknownOrAbsent() {
        #expect(DraftVersion.asked(Self.headers([:])) == .none)
        for version in DraftVersion.allCases {
            #expect(DraftVersion.asked(Self.headers(["Upload-Draft-Interop-Version": "\(version.rawValue)"])) == .served(version))
        }
        #expect(DraftVersion.asked(Self.headers(["Upload-Draft-Interop-Version": "4"])) == .unknown("4"))
        #expect(DraftVersion.asked(Self.headers(["Upload-Draft-Interop-Version": "six"])) == .unknown("six"))
        #expect(DraftVersion.asked(Self.headers(["Upload-Draft-Interop-Version": " 8 ;a=1"])) == .served(.v8))
    }

    /// -01 marks a part with `Upload-Incomplete: ?1`; from -02 on `Upload-Complete: ?0`.
    @Test func completenessIsReadAndSaidWithEachVersionsField() throws {
        #expect(try DraftVersion.v3.completes(Self.headers(["Upload-Incomplete": "?1"])) == false)
        #expect(try DraftVersion.v3.completes(Self.headers(["Upload-Incomplete": "?0"])) == true)
        #expect(try DraftVersion.v3.completes(Self.headers(["Upload-Complete": "?0"])) == nil)
        #expect(try DraftVersion.v7.completes(Self.headers(["Upload-Complete": "?0"])) == false)
        #expect(try DraftVersion.v7.completes(Self.headers([:])) == nil)
        #expect(throws: ServiceError.self) { try DraftVersion.v8.completes(Self.headers(["Upload-Complete": "yes"])) }
        #expect(DraftVersion.v3.completeness(false) == HTTPField(name: "Upload-Incomplete", value: "?1"))
        #expect(DraftVersion.v5.completeness(false) == HTTPField(name: "Upload-Complete", value: "?0"))
        #expect(DraftVersion.v8.completeness(true) == HTTPField(name: "Upload-Complete", value: "?1"))
    }

    /// A completing request's Content-Length is the length from -03 on; `Upload-Length` from
    /// -04 on; both given must agree (400).
    @Test func theLengthIsDeclaredAsEachVersionAllows() throws {
        let withLength = Self.headers(["Upload-Length": "100"])
        #expect(try DraftLength.declared(.v3, headers: withLength, contentLength: 100, offset: 0, completes: true) == nil)
        #expect(try DraftLength.declared(.v5, headers: withLength, contentLength: 60, offset: 40, completes: true) == 100)
        #expect(try DraftLength.declared(.v5, headers: withLength, contentLength: 60, offset: 40, completes: false) == nil)
        #expect(try DraftLength.declared(.v6, headers: withLength, contentLength: 25, offset: 0, completes: false) == 100)
        #expect(try DraftLength.declared(.v6, headers: withLength, contentLength: 100, offset: 0, completes: true) == 100)
        let error = #expect(throws: ServiceError.self) {
            try DraftLength.declared(.v8, headers: withLength, contentLength: 99, offset: 0, completes: true)
        }
        #expect(error?.code == .badRequest)
        #expect(throws: ServiceError.self) { try DraftLength.declared(.v6, headers: Self.headers(["Upload-Length": "-1"]), contentLength: nil, offset: 0, completes: false) }
    }

    @Test func theInterimAnswerCarriesTheLimitsFromVersion6() {
        let limits = DraftUploadLimits(maxSize: 1000, secondsLeft: 60)
        #expect(DraftAnswers.interim(.v5, location: "/v1/uploads/a", limits: limits).map(\.name) == ["Upload-Draft-Interop-Version", "Location"])
        #expect(DraftAnswers.interim(.v6, location: "/v1/uploads/a", limits: limits).last == HTTPField(name: "Upload-Limit", value: "max-size=1000"))
        #expect(DraftAnswers.interim(.v8, location: "/v1/uploads/a", limits: limits).last == HTTPField(name: "Upload-Limit", value: "max-size=1000, max-age=60"))
    }

    /// An append that is not the last: 201 until -05, 204 from -06; always the offset and `?0`.
    @Test func anIncompleteAnswerSaysSoInEveryVersion() {
        let limits = DraftUploadLimits(maxSize: 1000, secondsLeft: nil)
        for version in DraftVersion.allCases {
            let append = DraftAnswers.incomplete(version, offset: 25, location: nil, limits: limits)
            #expect(append.status == (version.rawValue >= 7 ? .noContent : .created))
            #expect(Self.field(append, "Upload-Offset") == "25")
            #expect(Self.field(append, version.completenessField) == (version == .v3 ? "?1" : "?0"))
            let creation = DraftAnswers.incomplete(version, offset: 25, location: "/v1/uploads/a", limits: limits)
            #expect(creation.status == .created && Self.field(creation, "Location") == "/v1/uploads/a")
        }
    }

    /// The completing answer is the target's, said complete (never inverted, as
    /// NIOResumableUpload's are); `Upload-Offset` only before -06.
    @Test func theCompletingAnswerIsTheTargetsSaidComplete() {
        for version in DraftVersion.allCases {
            let answer = DraftAnswers.completed(version, Response(status: .created), length: 100, location: nil)
            #expect(answer.status == .created)
            #expect(Self.field(answer, version.completenessField) == (version == .v3 ? "?0" : "?1"))
            #expect(Self.field(answer, "Upload-Offset") == (version.rawValue < 7 ? "100" : nil))
        }
    }

    /// HEAD: 204; `Upload-Length` from -04 on when known; `no-store`.
    @Test func anOffsetRetrievalAnswerCarriesWhatEachVersionAsks() {
        let limits = DraftUploadLimits(maxSize: 1000, secondsLeft: 30)
        let v3 = DraftAnswers.offset(.v3, offset: 10, complete: false, length: 100, limits: limits)
        #expect(v3.status == .noContent && Self.field(v3, "Upload-Incomplete") == "?1" && Self.field(v3, "Upload-Length") == nil)
        let v6 = DraftAnswers.offset(.v6, offset: 10, complete: false, length: 100, limits: limits)
        #expect(Self.field(v6, "Upload-Length") == "100" && Self.field(v6, "Upload-Limit") == "max-size=1000")
        #expect(Self.field(v6, "Cache-Control") == "no-store")
        let unknown = DraftAnswers.offset(.v8, offset: 10, complete: false, length: nil, limits: limits)
        #expect(Self.field(unknown, "Upload-Length") == nil && Self.field(unknown, "Upload-Limit") == "max-size=1000, max-age=30")
    }

    /// A wrong offset: 409 with the offset held; from -04 on a problem document, from -06 on
    /// `Upload-Complete: ?0`.
    @Test func aMismatchIs409WithTheOffsetAndFromVersion6AProblem() {
        let refusal = DraftRefusal(error: DraftProblem.mismatchingOffset.error("wrong"), problem: .mismatchingOffset, offset: 100, providedOffset: 200)
        let v5 = DraftAnswers.refusal(refusal, .v5)
        #expect(v5.status == .conflict && Self.field(v5, "Upload-Offset") == "100" && v5.contentType == "application/json")
        #expect(Self.field(v5, "Upload-Complete") == nil)
        let v7 = DraftAnswers.refusal(refusal, .v7)
        #expect(v7.status == .conflict && v7.contentType == "application/problem+json" && Self.field(v7, "Upload-Complete") == "?0")
        guard case .bytes(let body) = v7.body else { Issue.record("no body"); return }
        let text = String(decoding: body, as: UTF8.self)
        #expect(text.contains(#""type":"https://iana.org/assignments/http-problem-types#mismatching-upload-offset""#))
        #expect(text.contains(#""expected-offset":100"#) && text.contains(#""provided-offset":200"#) && text.contains(#""code":"offset_mismatch""#))
    }

    /// -01 to -05: a HEAD or DELETE carrying a transfer's fields is 400; -06 dropped the rule.
    @Test func retrievalRefusesTransferFieldsUntilVersion7() {
        #expect(DraftVersion.v3.fieldsRefusedOnRetrieval == ["Upload-Offset", "Upload-Incomplete"])
        #expect(DraftVersion.v5.fieldsRefusedOnRetrieval == ["Upload-Offset", "Upload-Complete"])
        #expect(DraftVersion.v6.fieldsRefusedOnRetrieval == ["Upload-Offset", "Upload-Complete", "Upload-Length"])
        #expect(DraftVersion.v7.fieldsRefusedOnRetrieval.isEmpty && DraftVersion.v8.fieldsRefusedOnRetrieval.isEmpty)
    }

    @Test func structuredFieldIntegersAreStrict() {
        #expect(StructuredField.integer("42") == 42 && StructuredField.integer(" 7;x") == 7 && StructuredField.integer("-3") == -3)
        #expect(StructuredField.integer("") == nil && StructuredField.integer("4.0") == nil && StructuredField.integer("1234567890123456") == nil)
        #expect(StructuredField.integer("+1") == nil && StructuredField.integer("0x10") == nil)
    }
}
