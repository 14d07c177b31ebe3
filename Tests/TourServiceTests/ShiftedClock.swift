import NTLogging
import Synchronization
@testable import NTServiceHTTP
@testable import NTServiceModel
@testable import NTServiceStorage
@testable import NTTourService
@testable import NTTourUseCases
@testable import NTUploads
@testable import NTViewerService
@testable import NTWebhooks

/// The system's clock moved on by what a test says: time passes as it does, and a test that
/// needs an expiry or a retention behind it moves the clock instead of waiting or rewriting
/// rows. Every daemon of a harness reads one.
final class ShiftedClock: ServiceClock {
    private let shift = Atomic<Int64>(0)

    func now() -> WallClockTime {
        var time = WallClockTime.now()
        time.seconds += shift.load(ordering: .relaxed)
        return time
    }

    func moveOn(seconds: Int64) { shift.add(seconds, ordering: .relaxed) }

    /// On to the next `hour`:00 UTC: a test that moves on some hours and counts by the day
    /// (visitors per day) then stays in one day whenever it runs.
    func moveOn(toHour hour: Int64) {
        let seconds = now().seconds, target = hour * 3600
        let intoDay = ((seconds % 86_400) + 86_400) % 86_400
        moveOn(seconds: (target - intoDay + 86_400) % 86_400)
    }
}
