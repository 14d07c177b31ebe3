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
}
