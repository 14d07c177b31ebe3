import NTLogging
import Synchronization

/// The time of day as the service reads it: given once by the composition, so that every
/// row's timestamps, expiries, retention and retries read one clock, and a test can move it
/// on instead of waiting (or rewriting rows).
package protocol ServiceClock: Sendable {
    func now() -> WallClockTime
}

extension ServiceClock {
    package var unixSeconds: Int64 { now().seconds }
    package var unixMilliseconds: Int64 {
        let time = now()
        return time.seconds * 1000 + time.nanoseconds / 1_000_000
    }
    /// Now as a row's timestamp, `seconds` later (an expiry).
    package func timestamp(plus seconds: Int = 0) -> String { Timestamp.text(now(), plus: seconds) }
}

/// The system's clock (CLOCK_REALTIME).
package struct SystemClock: ServiceClock {

    package init() {
    }
    package func now() -> WallClockTime { .now() }
}
