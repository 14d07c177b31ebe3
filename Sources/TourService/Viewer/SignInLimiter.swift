import Logging
import Synchronization

/// Failed sign-ins per client address in a sliding window: past `allowed` failures within
/// `window` seconds an address is refused until its oldest failure leaves the window, so a
/// token cannot be guessed from one place at speed. Pure: the time is passed in.
struct SignInFailures {
    let allowed: Int
    let window: Int64
    /// The most addresses remembered; past it the longest-quiet address is forgotten first.
    let capacity: Int
    private var failures: [[UInt8]: [Int64]] = [:]

    init(allowed: Int, window: Int, capacity: Int = 10_000) {
        self.allowed = allowed
        self.window = Int64(window)
        self.capacity = capacity
    }

    /// Seconds until the address may try again; nil when it may now.
    func retryAfter(_ address: [UInt8], now: Int64) -> Int? {
        let recent = (failures[address] ?? []).filter { $0 > now - window }
        guard recent.count >= allowed, let oldest = recent.first else { return nil }
        return Int(max(1, oldest + window - now))
    }

    mutating func recordFailure(_ address: [UInt8], now: Int64) {
        var recent = (failures[address] ?? []).filter { $0 > now - window }
        recent.append(now)
        failures[address] = Array(recent.suffix(allowed))
        if failures.count > capacity {
            // Forget addresses whose window has passed, then the quietest.
            failures = failures.filter { $0.value.last.map { $0 > now - window } ?? false }
            while failures.count > capacity, let quietest = failures.min(by: { ($0.value.last ?? 0) < ($1.value.last ?? 0) })?.key {
                failures[quietest] = nil
            }
        }
    }

    /// A successful sign-in clears the address's record.
    mutating func recordSuccess(_ address: [UInt8]) {
        failures[address] = nil
    }
}

/// `SignInFailures` shared by every request.
final class SignInLimiter: Sendable {
    private let state: Mutex<SignInFailures>

    init(allowed: Int, window: Int) {
        state = Mutex(SignInFailures(allowed: allowed, window: window))
    }

    func retryAfter(_ address: [UInt8]) -> Int? {
        let now = MonotonicClock.seconds()
        return state.withLock { $0.retryAfter(address, now: now) }
    }

    func recordFailure(_ address: [UInt8]) {
        let now = MonotonicClock.seconds()
        state.withLock { $0.recordFailure(address, now: now) }
    }

    func recordSuccess(_ address: [UInt8]) {
        state.withLock { $0.recordSuccess(address) }
    }
}

enum MonotonicClock {
    /// Monotonic seconds (windows must not jump with the wall clock).
    static func seconds() -> Int64 {
        Int64(monotonicNanoseconds() / 1_000_000_000)
    }
}
