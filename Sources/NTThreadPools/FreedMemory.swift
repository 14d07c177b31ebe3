import CNTLinux

/// Memory threads freed, given back to the system. glibc keeps it in the freeing thread's
/// arena for that thread's next allocations, so after a burst of work (hundreds of
/// connections, many uploads' buffers, decoded images) the process stays at its peak.
/// Called when such work ends, never on an event loop: a trim walks every arena under its lock.
public enum FreedMemory {
    public static func giveBack() {
        _ = nt_malloc_trim()
    }
}
