#if canImport(Glibc)
import Glibc
#endif
import CNTLinux

/// Starts a detached thread running `body`, named for `top` and debuggers (at most 15
/// characters are kept), and counted in `ThreadCensus` under `group` while it runs.
public func startThread(named name: String, group: String, _ body: @escaping @Sendable () -> Void) {
    final class Start {
        let name: String
        let body: @Sendable () -> Void
        init(name: String, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }
    var thread = pthread_t()
    ThreadCensus.threadStarted(group)
    let start = Unmanaged.passRetained(Start(name: name, body: {
        body()
        ThreadCensus.threadEnded(group)
    })).toOpaque()
    let result = pthread_create(&thread, nil, { raw in
        let start = Unmanaged<Start>.fromOpaque(raw!).takeRetainedValue()
        nt_set_thread_name(start.name)
        start.body()
        return nil
    }, start)
    precondition(result == 0, "pthread_create failed: \(result)")
    pthread_detach(thread)
}
