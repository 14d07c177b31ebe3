import Testing

extension Trait where Self == TimeLimitTrait {
    /// The time limit of every suite that starts a process, a server or a queue: it ends a test
    /// that hangs, and only one that hangs. A pass starts its tests together and they share two
    /// cores and Swift's two cooperative threads, so a test's time is its pass's (three minutes
    /// on a loaded machine, where a limit of three failed tests that were only waiting their
    /// turn). The limit is well past the longest pass; each pass has a limit of its own besides
    /// (Tests/repository/swift_test.sh), which names the tests that had not ended.
    public static var hangGuard: Self { .timeLimit(.minutes(10)) }
}
