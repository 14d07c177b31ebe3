#ifndef NOUGHTYTOURS_CLINUX_SHIM_H
#define NOUGHTYTOURS_CLINUX_SHIM_H
/* Linux calls that Glibc's Swift module does not export: epoll, eventfd, sync_file_range,
   prctl, renameat2.
   struct epoll_event is packed on x86-64, so Swift never touches it: these wrappers take and
   give plain values. */
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/types.h>
#include <stdint.h>

static inline int nt_epoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }

static inline int nt_epoll_ctl(int epfd, int op, int fd, uint32_t events, uint64_t data) {
    struct epoll_event event = { .events = events, .data = { .u64 = data } };
    return epoll_ctl(epfd, op, fd, &event);
}

/* Waits for up to `capacity` events; writes each one's flags and data to the two arrays. */
static inline int nt_epoll_wait(int epfd, uint32_t *flags, uint64_t *data, int capacity, int timeout) {
    struct epoll_event events[256];
    if (capacity > 256) capacity = 256;
    int count = epoll_wait(epfd, events, capacity, timeout);
    for (int i = 0; i < count; i++) {
        flags[i] = events[i].events;
        data[i] = events[i].data.u64;
    }
    return count;
}

static inline int nt_eventfd(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }

static const uint32_t NT_EPOLLIN = EPOLLIN;
static const uint32_t NT_EPOLLOUT = EPOLLOUT;
static const uint32_t NT_EPOLLERR = EPOLLERR;
static const uint32_t NT_EPOLLHUP = EPOLLHUP;
static const uint32_t NT_EPOLLRDHUP = EPOLLRDHUP;
static const uint32_t NT_EPOLLET = EPOLLET;
static const uint32_t NT_EPOLLEXCLUSIVE = EPOLLEXCLUSIVE;

/* sync_file_range is declared only under _GNU_SOURCE; glibc's own prototype, repeated. */
extern int sync_file_range(int __fd, __off64_t __offset, __off64_t __count, unsigned int __flags);

/* Starts writing a file range to disk without waiting (SYNC_FILE_RANGE_WRITE), so that a
   later fsync has little left to do. */
static inline int nt_start_writeback(int fd, int64_t offset, int64_t count) {
    return sync_file_range(fd, offset, count, 2 /* SYNC_FILE_RANGE_WRITE */);
}
/* The calling thread's id, for per-thread priorities (setpriority). */
static inline int nt_gettid(void) { return (int)gettid(); }

/* Names the calling thread (at most 15 bytes are kept), for top -H, perf and debuggers. */
static inline void nt_set_thread_name(const char *name) { prctl(PR_SET_NAME, name, 0, 0, 0); }

/* rename(2) that fails with EEXIST instead of replacing the target: renameat2 with
   RENAME_NOREPLACE, which glibc declares only under _GNU_SOURCE. */
extern int renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, unsigned int flags);
static inline int nt_rename_noreplace(const char *from, const char *to) {
    return renameat2(-100 /* AT_FDCWD */, from, -100, to, 1 /* RENAME_NOREPLACE */);
}

/* posix_spawn's file actions that glibc declares only under _GNU_SOURCE: close every
   descriptor from `lowest` on (2.34), change directory (2.29). Its own prototypes, repeated. */
#include <spawn.h>
extern int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *actions, int lowest);
extern int posix_spawn_file_actions_addchdir_np(posix_spawn_file_actions_t *actions, const char *path);

/* Gives memory freed into glibc's arenas back to the system (malloc.h, which Glibc's Swift
   module leaves out). */
#include <malloc.h>
static inline int nt_malloc_trim(void) {
    return malloc_trim(0);
}
/* Serves allocations of `bytes` and more from mappings of their own, given back when freed,
   and keeps glibc from raising that threshold by itself. */
static inline int nt_fix_mmap_threshold(int bytes) {
    return mallopt(M_MMAP_THRESHOLD, bytes);
}

/* pread that never waits for the disk (preadv2 with RWF_NOWAIT, which glibc declares only
   under _GNU_SOURCE): the bytes the page cache holds, or -1 with EAGAIN. Its own prototype,
   repeated. */
#include <sys/uio.h>
extern ssize_t preadv2(int fd, const struct iovec *iov, int iovcnt, off_t offset, int flags);
static inline long nt_pread_nowait(int fd, void *buffer, long count, int64_t offset) {
    struct iovec vector = { .iov_base = buffer, .iov_len = (size_t)count };
    return (long)preadv2(fd, &vector, 1, (off_t)offset, 0x00000008 /* RWF_NOWAIT */);
}
#endif
