/// The quality readings the SDK records with each panorama.
public struct CaptureReadings: Sendable, Equatable {
    public var iso: Double
    /// Shutter time in seconds (1/15 s is 0.0667).
    public var shutterSeconds: Double
    /// The camera's worst tilt from level during the sweep, in degrees.
    public var tiltDegrees: Double
    /// The fastest sweep speed, in degrees per second.
    public var sweepDegreesPerSecond: Double
    /// Shake: the RMS angular velocity across the sweep axis, in radians per second.
    public var shake: Double
    /// How far the sweep went backwards, in degrees.
    public var reversalDegrees: Double

    public init(iso: Double, shutterSeconds: Double, tiltDegrees: Double = 0, sweepDegreesPerSecond: Double = 20,
                shake: Double = 0, reversalDegrees: Double = 0) {
        self.iso = iso
        self.shutterSeconds = shutterSeconds
        self.tiltDegrees = tiltDegrees
        self.sweepDegreesPerSecond = sweepDegreesPerSecond
        self.shake = shake
        self.reversalDegrees = reversalDegrees
    }
}

/// Why a recorded panorama was discarded.
public enum DiscardReason: Sendable, Equatable {
    case tilt(degrees: Double)
    case sweepTooFast(degreesPerSecond: Double)
    case shake(radiansPerSecond: Double)
    case sweepReversed(degrees: Double)
}

/// The grading of a panorama, pure. The thresholds (also in docs/client.md):
/// - very low light blocks the shot before recording: ISO above 2000, or a shutter slower
///   than 1/15 s (the seed's own numbers);
/// - a bad enough breach discards it: tilt beyond 15°, a sweep faster than 60°/s, shake above
///   0.5 rad/s RMS, or a reversal of more than 20°. Below those the screens only warn (tilt
///   beyond 8°, sweep beyond 40°/s, shake beyond 0.25 rad/s, any reversal beyond 5°).
public enum PanoramaGrading {
    public static let maxISO: Double = 2000
    public static let slowestShutter: Double = 1.0 / 15.0
    public static let discardTilt: Double = 15
    public static let discardSweepSpeed: Double = 60
    public static let discardShake: Double = 0.5
    public static let discardReversal: Double = 20

    /// Why the light blocks the shot, or nil when it does not.
    public static func lightBlock(_ readings: CaptureReadings) -> String? {
        if readings.iso > maxISO { return "very low light: ISO \(Int(readings.iso)) is above \(Int(maxISO))" }
        if readings.shutterSeconds > slowestShutter { return "very low light: the shutter is slower than 1/15 s" }
        return nil
    }

    /// Why the recorded panorama is discarded, or nil to keep it.
    public static func discard(_ readings: CaptureReadings) -> DiscardReason? {
        if abs(readings.tiltDegrees) > discardTilt { return .tilt(degrees: readings.tiltDegrees) }
        if readings.sweepDegreesPerSecond > discardSweepSpeed { return .sweepTooFast(degreesPerSecond: readings.sweepDegreesPerSecond) }
        if readings.shake > discardShake { return .shake(radiansPerSecond: readings.shake) }
        if readings.reversalDegrees > discardReversal { return .sweepReversed(degrees: readings.reversalDegrees) }
        return nil
    }
}
