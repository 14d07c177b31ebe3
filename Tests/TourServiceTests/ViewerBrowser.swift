import Foundation
import TestSupport

/// A browser's requests: cookies kept between answers, no bearer token.
final class ViewerBrowser {
    let client: APIClient
    var cookies: [String: String] = [:]
    /// Sent as `X-Forwarded-For` with every request (a proxy's doing).
    let forwardedFor: String?

    init(_ harness: ServiceHarness, forwardedFor: String? = nil) throws {
        client = try harness.client(nil)
        self.forwardedFor = forwardedFor
    }

    @discardableResult
    func send(_ method: String, _ target: String, form: [String: String]? = nil) throws -> RawClient.Response {
        var headers: [String: String] = [:]
        if let forwardedFor { headers["X-Forwarded-For"] = forwardedFor }
        if !cookies.isEmpty { headers["Cookie"] = cookies.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "; ") }
        var body: [UInt8] = []
        if let form {
            headers["Content-Type"] = "application/x-www-form-urlencoded"
            body = Array(form.sorted { $0.key < $1.key }.map { "\($0.key)=\(encode($0.value))" }.joined(separator: "&").utf8)
        }
        let response = try client.send(method, target, body: body, headers: headers)
        for header in response.headers where header.name.lowercased() == "set-cookie" {
            let pair = header.value.split(separator: ";")[0].split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(pair[0]), value = String(pair[1])
            if header.value.contains("Max-Age=0") { cookies[name] = nil } else { cookies[name] = value }
        }
        return response
    }

    private func encode(_ value: String) -> String {
        value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? value
    }

    /// The csrf value of the first form on the page.
    static func csrf(_ response: RawClient.Response) -> String? {
        let page = String(decoding: response.body, as: UTF8.self)
        guard let range = page.range(of: "name=\"csrf\" value=\"") else { return nil }
        return String(page[range.upperBound...].prefix { $0 != "\"" })
    }

    func signIn(_ token: String) throws -> RawClient.Response {
        let form = try send("GET", "/app/login")
        return try send("POST", "/app/login", form: ["csrf": Self.csrf(form) ?? "", "token": token])
    }
}
