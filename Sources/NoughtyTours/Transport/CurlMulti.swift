import CNTCurl
import NTCurlRuntime
import Foundation
import Synchronization

/// A libcurl multi handle on a thread of its own: it drives several transfers at once over
/// reused connections, and answers each with a callback. Everything libcurl does happens on
/// that thread; other threads only hand transfers in (or ask one to stop) through a locked
/// inbox and `curl_multi_wakeup` (which libcurl allows from any thread).
final class CurlMulti: @unchecked Sendable {
    private let multi: UnsafeMutableRawPointer
    private let inbox = Mutex(Inbox())

    private struct Inbox {
        var added: [CurlTransfer] = []
        var stopping = false
    }

    /// `connectionsPerHost` caps the connections kept to the server (and reused).
    init(connectionsPerHost: Int) throws(NoughtyToursError) {
        try CurlRuntime.ensureStarted()
        guard let multi = curl_multi_init() else { throw .transport("libcurl could not make a multi handle") }
        self.multi = multi
        let code = nt_curl_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, connectionsPerHost)
        guard code == CURLM_OK else {
            curl_multi_cleanup(multi)
            throw .transport("libcurl refused CURLMOPT_MAX_HOST_CONNECTIONS: \(String(cString: curl_multi_strerror(code)))")
        }
        let thread = Thread { [self] in run() }
        thread.name = "NoughtyTours.transport"
        thread.start()
    }

    /// Sends the request; the answer, or why there is none. Cancelling the task stops the
    /// transfer (it ends as a transport failure).
    func perform(_ request: HTTPRequest, limits: TransferLimits, progress: ProgressHandler? = nil) async -> Result<HTTPResponse, NoughtyToursError> {
        let transfer: CurlTransfer
        do {
            transfer = try CurlTransfer(request, limits: limits, progress: progress)
        } catch {
            return .failure(error)
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                transfer.completion = { continuation.resume(returning: $0) }
                let accepted = inbox.withLock { inbox in
                    guard !inbox.stopping else { return false }
                    inbox.added.append(transfer)
                    return true
                }
                if accepted {
                    curl_multi_wakeup(multi)
                } else {
                    transfer.completion = nil
                    continuation.resume(returning: .failure(.transport("the transport was stopped")))
                }
            }
        } onCancel: {
            transfer.cancelled.store(true, ordering: .relaxed)
            curl_multi_wakeup(multi)
        }
    }

    /// Stops every transfer (each ends as a transport failure) and the thread. Idempotent.
    func shutdown() {
        inbox.withLock { $0.stopping = true }
        curl_multi_wakeup(multi)
    }

    /// The transport's thread: add what arrived, let libcurl work, answer what finished.
    private func run() {
        var active: [UnsafeMutableRawPointer: CurlTransfer] = [:]
        while true {
            let (added, stopping) = inbox.withLock { inbox in
                defer { inbox.added = [] }
                return (inbox.added, inbox.stopping)
            }
            for transfer in added {
                let code = curl_multi_add_handle(multi, transfer.easy)
                if code == CURLM_OK {
                    active[transfer.easy] = transfer
                } else {
                    complete(transfer, .failure(.transport("libcurl could not start the transfer: \(String(cString: curl_multi_strerror(code)))")))
                }
            }
            for (easy, transfer) in active where stopping || transfer.cancelled.load(ordering: .relaxed) {
                curl_multi_remove_handle(multi, easy)
                active[easy] = nil
                complete(transfer, .failure(.transport(stopping ? "the transport was stopped" : "the transfer was cancelled")))
            }
            if stopping { break }
            var running: Int32 = 0
            curl_multi_perform(multi, &running)
            var queued: Int32 = 0
            while let message = curl_multi_info_read(multi, &queued) {
                guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle,
                      let transfer = active.removeValue(forKey: easy) else { continue }
                let code = message.pointee.data.result
                curl_multi_remove_handle(multi, easy)
                complete(transfer, transfer.result(code))
            }
            // Sleeps until a socket is ready, a wakeup, or libcurl's own timers are due.
            curl_multi_poll(multi, nil, 0, 1000, nil)
        }
        curl_multi_cleanup(multi)
    }

    private func complete(_ transfer: CurlTransfer, _ result: Result<HTTPResponse, NoughtyToursError>) {
        let completion = transfer.completion
        transfer.completion = nil
        completion?(result)
    }
}
