import Foundation
import NTServiceModel
import NTServiceStorage
import NTTourUseCases
import NTViewerService
import NTWebhooks

/// The token /metrics asks for when `metricsTokenFile` names one: the file's text, without the
/// line end an editor leaves.
enum MetricsToken {
    static func load(_ path: String) throws(StartupError) -> [UInt8]? {
        guard !path.isEmpty else { return nil }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw StartupError("metricsTokenFile \(path) cannot be read")
        }
        let token = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard token.count >= 16, !token.contains(where: \.isWhitespace) else {
            throw StartupError("metricsTokenFile \(path) must hold one token of 16 characters or more")
        }
        return Array(token.utf8)
    }
}
