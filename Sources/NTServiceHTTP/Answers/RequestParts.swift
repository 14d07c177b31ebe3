import NTAPIModel
import NTHTTPCore
import NTServiceModel
import NTServiceStorage
import NTTourUseCases

extension Request {
    /// The path parameter `{name}` as a client-made id, or a 400 naming it.
    package func uuid(_ name: String) throws(ServiceError) -> String {
        try Identifier.checked(parameter(name), name)
    }

    /// A paged list's `?limit=N&after=CURSOR` (docs/api.md: limit 1 to 200, 50 by default; the cursor
    /// an id of the list).
    package func pageQuery() throws -> (limit: Int, after: String?) {
        (try pageLimit(), try queryParameter("after").map { text throws(ServiceError) in try Identifier.checked(text, "after") })
    }

    /// A paged list's `?limit=N`.
    package func pageLimit() throws -> Int {
        guard let text = try queryParameter("limit") else { return 50 }
        guard let value = Int(text), (1...200).contains(value) else { throw ServiceError.badRequest("limit must be 1 to 200") }
        return value
    }
}

extension Response {
    /// An answer whose body is one of the API's documents.
    package static func document(_ status: HTTPStatus, _ document: some JSONDocument) -> Response {
        .json(status, document.jsonBytes)
    }
}
