import Testing
@testable import NTObjectStorage

@Suite struct S3AnswersTests {
    func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test func aListingGivesKeysBelowThePrefixAndItsNextPage() {
        let xml = """
        <?xml version="1.0" encoding="UTF-8"?>
        <ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>b</Name><Prefix>p/</Prefix><IsTruncated>true</IsTruncated>
        <Contents><Key>p/1/panoramas/a&amp;b</Key><LastModified>2026-12-03T07:00:01.000Z</LastModified><ETag>&quot;x&quot;</ETag><Size>42</Size></Contents>
        <Contents><Key>p/2/worldmaps/w</Key><LastModified>1970-01-02T00:00:00Z</LastModified><Size>0</Size></Contents>
        <NextContinuationToken>tok+/=</NextContinuationToken></ListBucketResult>
        """
        let page = S3Answers.objects(bytes(xml), below: "p/")
        #expect(page.entries == [ObjectSummary(key: "1/panoramas/a&b", size: 42, lastModified: 1_796_281_201),
                                 ObjectSummary(key: "2/worldmaps/w", size: 0, lastModified: 86400)])
        #expect(page.next == "tok+/=")
        #expect(S3Answers.objects(bytes(xml.replacingOccurrences(of: "<IsTruncated>true", with: "<IsTruncated>false")), below: "p/").next == nil)
    }

    @Test func uploadsAreRead() {
        let uploads = S3Answers.uploads(bytes("""
        <ListMultipartUploadsResult><IsTruncated>true</IsTruncated><NextKeyMarker>p/k</NextKeyMarker><NextUploadIdMarker>u2</NextUploadIdMarker>
        <Upload><Key>p/k</Key><UploadId>u2</UploadId><Initiated>2010-11-10T20:48:33.000Z</Initiated></Upload>
        <Upload><Key>elsewhere</Key><UploadId>u3</UploadId></Upload></ListMultipartUploadsResult>
        """), below: "p/")
        #expect(uploads.entries == [MultipartUpload(key: "k", uploadId: "u2", initiated: 1_289_422_113)])
        #expect(uploads.next == "p/k\nu2")
    }

    @Test func errorsAndCompletionDocuments() {
        let error = bytes("<?xml version=\"1.0\"?><Error><Code>EntityTooSmall</Code><Message>Your proposed upload is smaller</Message></Error>")
        #expect(S3Answers.error(error)?.code == "EntityTooSmall")
        #expect(ObjectStoreError.answer(400, error, what: "complete k") == .refused(status: 400, code: "EntityTooSmall", message: "Your proposed upload is smaller"))
        #expect(ObjectStoreError.answer(503, bytes("<Error><Code>SlowDown</Code></Error>"), what: "PUT k") == .unavailable("PUT k: SlowDown "))
        #expect(ObjectStoreError.answer(404, [], what: "GET k") == .notFound("GET k: HTTP 404"))
        #expect(S3Answers.error(bytes("<CompleteMultipartUploadResult><ETag>x</ETag></CompleteMultipartUploadResult>")) == nil)
        let completion = String(decoding: S3Answers.completion([UploadedPart(number: 2, etag: "\"b\"", size: 1), UploadedPart(number: 1, etag: "\"a\"", size: 1)]), as: UTF8.self)
        #expect(completion == "<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>&quot;a&quot;</ETag></Part><Part><PartNumber>2</PartNumber><ETag>&quot;b&quot;</ETag></Part></CompleteMultipartUpload>")
        #expect(S3Answers.uploadId(bytes("<InitiateMultipartUploadResult><Bucket>b</Bucket><UploadId>abc-1</UploadId></InitiateMultipartUploadResult>")) == "abc-1")
        #expect(S3XML(bytes("<A><B/><C>&#x41;&#66;&bogus;</C></A>")).value("C") == "AB&bogus;")
        #expect(S3XML(bytes("<A><B/><C>x</C></A>")).value("B") == "")
    }

    @Test func datesAreSecondsSince1970() {
        #expect(S3Answers.isoSeconds("1970-01-01T00:00:00Z") == 0)
        #expect(S3Answers.isoSeconds("2000-02-29T12:00:00.123Z") == 951_825_600)
        #expect(S3Answers.isoSeconds("2026-13-01T00:00:00Z") == nil)
        #expect(S3Answers.isoSeconds("garbage") == nil)
        #expect(HTTPDates.seconds("Thu, 03 Dec 2026 07:00:01 GMT") == 1_796_281_201)
    }
}
