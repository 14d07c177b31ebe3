#if canImport(Glibc)
import Glibc
#endif
import NTServiceModel

/// The steps between a file and the row that names it, where a test can make toursd die on
/// the spot (`_exit`: no clean-up, no flush of anything not already made durable) to check
/// that a crash at any of them leaves the old state or the new one, whole. Armed only by the
/// `TOURSD_CRASH_AT` environment variable, which tests set; unarmed, a check is one compare.
public enum CrashPoint: String, Sendable, CaseIterable {
    /// A resumable upload's last byte is fsynced and recorded; nothing else is done yet.
    case uploadFinishing = "upload.finishing"
    /// Its partial file is linked, durably, to the panorama's name; no row yet.
    case uploadLinked = "upload.linked"
    /// The panorama row and the upload's end are committed; the partial name is still there.
    case uploadCommitted = "upload.committed"
    /// The partial name is removed: the answer is next.
    case uploadUnlinked = "upload.unlinked"
    /// A one-shot panorama's file is in place; no row yet.
    case panoramaPlaced = "panorama.placed"
    case panoramaCommitted = "panorama.committed"
    /// A world map's file is in place under its fresh name; the floor still names the old one.
    case worldMapPlaced = "worldmap.placed"
    /// The floor names the new file; the old one is still there.
    case worldMapCommitted = "worldmap.committed"
    /// A plan is committed; the world map it cleared is still there.
    case planCommitted = "plan.committed"

    /// The exit status of a process that died at its crash point.
    public static let exitStatus: Int32 = 86
}

/// Where this process is to die, if anywhere.
package struct CrashPoints: Sendable {
    package let armed: CrashPoint?

    package init(armed: CrashPoint?) {
        self.armed = armed
    }

    package func reached(_ point: CrashPoint) {
        if point == armed { _exit(CrashPoint.exitStatus) }
    }
}
