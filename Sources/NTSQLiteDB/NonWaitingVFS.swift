#if canImport(Glibc)
import Glibc
#endif
import CNTLinux
import CNTSQLite
import NTThreadPools

/// SQLite's own "unix" VFS, with one difference on an event loop's thread
/// (`EventLoopThread`): a file read asks the kernel not to wait for the disk (`preadv2` with
/// RWF_NOWAIT), and a sleep (a busy retry) is not taken. Either refusal fails the read with
/// SQLITE_IOERR_READ (or SQLITE_BUSY) and is counted on the thread (`refusedWaits`), so the
/// pool answers from a reader thread instead (`DatabasePool.read`). Everything else (locks,
/// which never wait here; the WAL index in shared memory) is the unix VFS's own, unchanged.
/// Off a loop, every call goes straight to the unix VFS.
///
/// Each file is the unix VFS's file behind a header of our own: our methods, and the
/// descriptor the unix file reads (checked with fstat against the file opened; -1 when it
/// could not be, and every loop read of that file is refused).
enum NonWaitingVFS {
    static let name = "nt-nonwaiting"

    /// Registers the VFS once (not as the default); true when it is there to be opened with.
    static let registered: Bool = {
        guard let unix = sqlite3_vfs_find("unix") else { return false }
        let vfs = UnsafeMutablePointer<sqlite3_vfs>.allocate(capacity: 1)
        vfs.initialize(to: unix.pointee)
        vfs.pointee.szOsFile = Int32(headerSize) + unix.pointee.szOsFile
        vfs.pointee.zName = UnsafePointer(strdup(name))
        vfs.pointee.pNext = nil
        vfs.pointee.xOpen = { _, path, file, flags, outFlags in open(path, file!, flags, outFlags) }
        vfs.pointee.xSleep = { _, microseconds in
            if let loop = EventLoopThread.current {
                loop.refusedWaits += 1
                return 0
            }
            return unixVFS.pointee.xSleep!(unixVFS, microseconds)
        }
        return sqlite3_vfs_register(vfs, 0) == SQLITE_OK
    }()

    /// A connection's busy handler on a loop: a lock held elsewhere is a wait refused.
    static let refuseBusy: @convention(c) (UnsafeMutableRawPointer?, Int32) -> Int32 = { _, _ in
        EventLoopThread.current?.refusedWaits += 1
        return 0
    }

    // Set once and never written after: SQLite's VFS records and our methods are read-only.
    nonisolated(unsafe) private static let unixVFS: UnsafeMutablePointer<sqlite3_vfs> = sqlite3_vfs_find("unix")!
    /// SQLITE_IOERR_READ and SQLITE_IOERR_SHORT_READ, macros Swift cannot import.
    private static let readFailed = SQLITE_IOERR | (1 << 8)
    private static let shortRead = SQLITE_IOERR | (2 << 8)

    /// Our methods pointer and the descriptor, before the unix file.
    private static let headerSize = 16

    private struct Header {
        var methods: UnsafePointer<sqlite3_io_methods>?
        var descriptor: Int64
    }

    private static func header(_ file: UnsafeMutablePointer<sqlite3_file>) -> UnsafeMutablePointer<Header> {
        UnsafeMutableRawPointer(file).assumingMemoryBound(to: Header.self)
    }

    private static func unixFile(_ file: UnsafeMutablePointer<sqlite3_file>?) -> UnsafeMutablePointer<sqlite3_file> {
        UnsafeMutableRawPointer(file!).advanced(by: headerSize).assumingMemoryBound(to: sqlite3_file.self)
    }

    private static func unixMethods(_ file: UnsafeMutablePointer<sqlite3_file>?) -> sqlite3_io_methods {
        unixFile(file).pointee.pMethods!.pointee
    }

    private static func open(_ path: UnsafePointer<CChar>?, _ file: UnsafeMutablePointer<sqlite3_file>, _ flags: Int32,
                             _ outFlags: UnsafeMutablePointer<Int32>?) -> Int32 {
        let real = unixFile(file)
        real.pointee.pMethods = nil
        let result = unixVFS.pointee.xOpen!(unixVFS, path, real, flags, outFlags)
        // Every method is forwarded, the shared-memory ones included: the unix VFS's files
        // have them all (version 3).
        guard result == SQLITE_OK, let unixMethods = real.pointee.pMethods, unixMethods.pointee.iVersion >= 3 else {
            if let methods = real.pointee.pMethods { _ = methods.pointee.xClose!(real) }
            file.pointee.pMethods = nil
            return result == SQLITE_OK ? SQLITE_CANTOPEN : result
        }
        header(file).pointee = Header(methods: methods, descriptor: Int64(verifiedDescriptor(real, path: path)))
        return SQLITE_OK
    }

    /// The unix file's descriptor, when fstat finds it is the file at `path`; else -1.
    private static func verifiedDescriptor(_ real: UnsafeMutablePointer<sqlite3_file>, path: UnsafePointer<CChar>?) -> Int32 {
        guard let path else { return -1 }
        let descriptor = nt_sqlite3_unix_descriptor(real)
        var opened = stat(), named = stat()
        guard descriptor >= 0, fstat(descriptor, &opened) == 0, stat(path, &named) == 0,
              opened.st_dev == named.st_dev, opened.st_ino == named.st_ino else { return -1 }
        return descriptor
    }

    /// A read on a loop: what the page cache holds, or a refusal. Off a loop: the unix VFS's.
    private static func read(_ file: UnsafeMutablePointer<sqlite3_file>?, _ buffer: UnsafeMutableRawPointer?, _ amount: Int32,
                             _ offset: sqlite3_int64) -> Int32 {
        guard let loop = EventLoopThread.current else { return unixMethods(file).xRead!(unixFile(file), buffer, amount, offset) }
        let descriptor = Int32(truncatingIfNeeded: header(file!).pointee.descriptor)
        var done = 0
        while descriptor >= 0 && done < Int(amount) {
            let got = nt_pread_nowait(descriptor, buffer! + done, Int(amount) - done, offset + Int64(done))
            if got > 0 {
                done += got
            } else if got == 0 {
                // Past the end: the rest reads as zeros, as the unix VFS answers.
                memset(buffer! + done, 0, Int(amount) - done)
                return shortRead
            } else if errno != EINTR {
                break
            }
        }
        if done == Int(amount) { return SQLITE_OK }
        loop.refusedWaits += 1
        return readFailed
    }

    nonisolated(unsafe) private static let methods: UnsafePointer<sqlite3_io_methods> = {
        var methods = sqlite3_io_methods()
        methods.iVersion = 3
        methods.xClose = { file in unixMethods(file).xClose!(unixFile(file)) }
        methods.xRead = { file, buffer, amount, offset in read(file, buffer, amount, offset) }
        methods.xWrite = { file, buffer, amount, offset in unixMethods(file).xWrite!(unixFile(file), buffer, amount, offset) }
        methods.xTruncate = { file, size in unixMethods(file).xTruncate!(unixFile(file), size) }
        methods.xSync = { file, flags in unixMethods(file).xSync!(unixFile(file), flags) }
        methods.xFileSize = { file, size in unixMethods(file).xFileSize!(unixFile(file), size) }
        methods.xLock = { file, lock in unixMethods(file).xLock!(unixFile(file), lock) }
        methods.xUnlock = { file, lock in unixMethods(file).xUnlock!(unixFile(file), lock) }
        methods.xCheckReservedLock = { file, out in unixMethods(file).xCheckReservedLock!(unixFile(file), out) }
        methods.xFileControl = { file, operation, argument in unixMethods(file).xFileControl!(unixFile(file), operation, argument) }
        methods.xSectorSize = { file in unixMethods(file).xSectorSize!(unixFile(file)) }
        methods.xDeviceCharacteristics = { file in unixMethods(file).xDeviceCharacteristics!(unixFile(file)) }
        methods.xShmMap = { file, region, size, extend, out in unixMethods(file).xShmMap!(unixFile(file), region, size, extend, out) }
        methods.xShmLock = { file, offset, count, flags in unixMethods(file).xShmLock!(unixFile(file), offset, count, flags) }
        methods.xShmBarrier = { file in unixMethods(file).xShmBarrier!(unixFile(file)) }
        methods.xShmUnmap = { file, delete in unixMethods(file).xShmUnmap!(unixFile(file), delete) }
        // A memory-mapped page could fault on the disk: a loop is always given none (SQLite
        // then reads), though the pool turns mapping off on a loop's connection anyway.
        methods.xFetch = { file, offset, amount, page in
            guard EventLoopThread.current == nil else {
                page?.pointee = nil
                return SQLITE_OK
            }
            return unixMethods(file).xFetch!(unixFile(file), offset, amount, page)
        }
        methods.xUnfetch = { file, offset, page in unixMethods(file).xUnfetch!(unixFile(file), offset, page) }
        let pointer = UnsafeMutablePointer<sqlite3_io_methods>.allocate(capacity: 1)
        pointer.initialize(to: methods)
        return UnsafePointer(pointer)
    }()
}
