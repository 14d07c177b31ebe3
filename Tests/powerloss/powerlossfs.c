// powerlossfs: a FUSE file system for tests that loses power on command, the way LazyFS does.
//
// Everything lives in memory. Each file has its current bytes and its durable bytes; each
// directory its current entries and its durable entries. fsync/fdatasync of a file makes its
// bytes durable; fsync of a directory makes its entries durable (creations, renames, links and
// unlinks in it). Creating the file ".powerloss" at the root "loses power": every file goes
// back to its durable bytes and every directory to its durable entries, exactly what a machine
// that crashed would find on a disk that keeps only what was synced (and nothing more: strict
// POSIX, where a new name needs its directory synced). The create then fails with ECANCELED,
// so the caller knows it happened.
//
// Single-threaded (-s): no locking. Inodes are never freed (a test's file system is small).
//
// usage: powerlossfs MOUNTPOINT [-f] [-s] [-o ...]

#define _GNU_SOURCE
#define FUSE_USE_VERSION 31
#include <fuse.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct bytes {
    char *data;
    size_t size, capacity;
};

struct entry {
    char *name;
    struct node *node;
};

struct entries {
    struct entry *items;
    size_t count, capacity;
};

struct node {
    unsigned long id;
    mode_t mode;
    struct bytes current, durable; // files
    struct entries now, synced;    // directories
    struct timespec mtime;
};

static struct node **nodes;
static size_t node_count, node_capacity;
static struct node *root;
static unsigned long power_losses;

static void *grow(void *pointer, size_t size) {
    void *grown = realloc(pointer, size);
    if (!grown) abort();
    return grown;
}

static struct node *make_node(mode_t mode) {
    struct node *node = calloc(1, sizeof *node);
    if (!node) abort();
    node->id = node_count + 1;
    node->mode = mode;
    clock_gettime(CLOCK_REALTIME, &node->mtime);
    if (node_count == node_capacity) {
        node_capacity = node_capacity ? node_capacity * 2 : 64;
        nodes = grow(nodes, node_capacity * sizeof *nodes);
    }
    nodes[node_count++] = node;
    return node;
}

static void copy_bytes(struct bytes *to, const struct bytes *from) {
    if (to->capacity < from->size) {
        to->data = grow(to->data, from->size);
        to->capacity = from->size;
    }
    if (from->size) memcpy(to->data, from->data, from->size);
    to->size = from->size;
}

static void resize(struct bytes *bytes, size_t size) {
    if (size > bytes->capacity) {
        size_t capacity = bytes->capacity ? bytes->capacity : 4096;
        while (capacity < size) capacity *= 2;
        bytes->data = grow(bytes->data, capacity);
        bytes->capacity = capacity;
    }
    if (size > bytes->size) memset(bytes->data + bytes->size, 0, size - bytes->size);
    bytes->size = size;
}

static void copy_entries(struct entries *to, const struct entries *from) {
    for (size_t i = 0; i < to->count; i++) free(to->items[i].name);
    if (to->capacity < from->count) {
        to->items = grow(to->items, from->count * sizeof *to->items);
        to->capacity = from->count;
    }
    for (size_t i = 0; i < from->count; i++) {
        to->items[i].name = strdup(from->items[i].name);
        to->items[i].node = from->items[i].node;
    }
    to->count = from->count;
}

static struct entry *find_entry(struct node *dir, const char *name, size_t length) {
    for (size_t i = 0; i < dir->now.count; i++) {
        if (strlen(dir->now.items[i].name) == length && memcmp(dir->now.items[i].name, name, length) == 0) return &dir->now.items[i];
    }
    return NULL;
}

static void add_entry(struct node *dir, const char *name, struct node *node) {
    if (dir->now.count == dir->now.capacity) {
        dir->now.capacity = dir->now.capacity ? dir->now.capacity * 2 : 8;
        dir->now.items = grow(dir->now.items, dir->now.capacity * sizeof *dir->now.items);
    }
    dir->now.items[dir->now.count].name = strdup(name);
    dir->now.items[dir->now.count].node = node;
    dir->now.count++;
}

static void remove_entry(struct node *dir, struct entry *entry) {
    free(entry->name);
    *entry = dir->now.items[--dir->now.count];
}

/// The node at `path`, or NULL.
static struct node *lookup(const char *path) {
    struct node *node = root;
    const char *part = path;
    while (*part == '/') part++;
    while (*part) {
        if (!S_ISDIR(node->mode)) return NULL;
        const char *end = strchr(part, '/');
        size_t length = end ? (size_t)(end - part) : strlen(part);
        struct entry *entry = find_entry(node, part, length);
        if (!entry) return NULL;
        node = entry->node;
        part += length;
        while (*part == '/') part++;
    }
    return node;
}

/// The directory holding `path`'s last part, and that part.
static struct node *parent_of(const char *path, const char **name) {
    const char *slash = strrchr(path, '/');
    *name = slash + 1;
    char *dir = strndup(path, (size_t)(slash - path));
    struct node *node = slash == path ? root : lookup(dir);
    free(dir);
    return node && S_ISDIR(node->mode) ? node : NULL;
}

static unsigned links_to(struct node *target) {
    unsigned links = 0;
    for (size_t i = 0; i < node_count; i++) {
        struct node *dir = nodes[i];
        if (!S_ISDIR(dir->mode)) continue;
        for (size_t j = 0; j < dir->now.count; j++) links += dir->now.items[j].node == target;
    }
    return links;
}

/// Power is lost: every file back to its durable bytes, every directory to its durable entries.
static void lose_power(void) {
    for (size_t i = 0; i < node_count; i++) {
        struct node *node = nodes[i];
        if (S_ISDIR(node->mode)) {
            copy_entries(&node->now, &node->synced);
        } else {
            copy_bytes(&node->current, &node->durable);
        }
    }
    power_losses++;
    fprintf(stderr, "powerlossfs: power lost (%lu)\n", power_losses);
}

static int fs_getattr(const char *path, struct stat *st, struct fuse_file_info *fi) {
    (void)fi;
    struct node *node = lookup(path);
    if (!node) return -ENOENT;
    memset(st, 0, sizeof *st);
    st->st_ino = node->id;
    st->st_mode = node->mode;
    st->st_nlink = S_ISDIR(node->mode) ? 2 : links_to(node);
    st->st_size = S_ISDIR(node->mode) ? 4096 : (off_t)node->current.size;
    st->st_blksize = 4096;
    st->st_blocks = (st->st_size + 511) / 512;
    st->st_mtim = st->st_ctim = st->st_atim = node->mtime;
    st->st_uid = getuid();
    st->st_gid = getgid();
    return 0;
}

static int fs_readdir(const char *path, void *buffer, fuse_fill_dir_t fill, off_t offset, struct fuse_file_info *fi,
                      enum fuse_readdir_flags flags) {
    (void)offset, (void)fi, (void)flags;
    struct node *dir = lookup(path);
    if (!dir || !S_ISDIR(dir->mode)) return -ENOENT;
    fill(buffer, ".", NULL, 0, 0);
    fill(buffer, "..", NULL, 0, 0);
    for (size_t i = 0; i < dir->now.count; i++) fill(buffer, dir->now.items[i].name, NULL, 0, 0);
    return 0;
}

static int make(const char *path, mode_t mode) {
    const char *name;
    struct node *dir = parent_of(path, &name);
    if (!dir) return -ENOENT;
    if (find_entry(dir, name, strlen(name))) return -EEXIST;
    add_entry(dir, name, make_node(mode));
    return 0;
}

static int fs_mkdir(const char *path, mode_t mode) { return make(path, S_IFDIR | (mode & 07777)); }

static int fs_create(const char *path, mode_t mode, struct fuse_file_info *fi) {
    (void)fi;
    if (strcmp(path, "/.powerloss") == 0) {
        lose_power();
        return -ECANCELED;
    }
    return make(path, S_IFREG | (mode & 07777));
}

static int fs_mknod(const char *path, mode_t mode, dev_t dev) {
    (void)dev;
    return S_ISREG(mode) ? make(path, mode) : -EPERM;
}

static int fs_open(const char *path, struct fuse_file_info *fi) {
    struct node *node = lookup(path);
    if (!node) return -ENOENT;
    if (fi->flags & O_TRUNC) resize(&node->current, 0);
    return 0;
}

static int fs_read(const char *path, char *buffer, size_t size, off_t offset, struct fuse_file_info *fi) {
    (void)fi;
    struct node *node = lookup(path);
    if (!node) return -ENOENT;
    if ((size_t)offset >= node->current.size) return 0;
    size_t count = node->current.size - (size_t)offset < size ? node->current.size - (size_t)offset : size;
    memcpy(buffer, node->current.data + offset, count);
    return (int)count;
}

static int fs_write(const char *path, const char *buffer, size_t size, off_t offset, struct fuse_file_info *fi) {
    (void)fi;
    struct node *node = lookup(path);
    if (!node) return -ENOENT;
    if ((size_t)offset + size > node->current.size) resize(&node->current, (size_t)offset + size);
    memcpy(node->current.data + offset, buffer, size);
    clock_gettime(CLOCK_REALTIME, &node->mtime);
    return (int)size;
}

static int fs_truncate(const char *path, off_t size, struct fuse_file_info *fi) {
    (void)fi;
    struct node *node = lookup(path);
    if (!node) return -ENOENT;
    resize(&node->current, (size_t)size);
    return 0;
}

static int fs_unlink(const char *path) {
    const char *name;
    struct node *dir = parent_of(path, &name);
    struct entry *entry = dir ? find_entry(dir, name, strlen(name)) : NULL;
    if (!entry) return -ENOENT;
    if (S_ISDIR(entry->node->mode)) return -EISDIR;
    remove_entry(dir, entry);
    return 0;
}

static int fs_rmdir(const char *path) {
    const char *name;
    struct node *dir = parent_of(path, &name);
    struct entry *entry = dir ? find_entry(dir, name, strlen(name)) : NULL;
    if (!entry) return -ENOENT;
    if (!S_ISDIR(entry->node->mode)) return -ENOTDIR;
    if (entry->node->now.count) return -ENOTEMPTY;
    remove_entry(dir, entry);
    return 0;
}

static int fs_rename(const char *from, const char *to, unsigned int flags) {
    if (flags & ~RENAME_NOREPLACE) return -EINVAL;
    const char *from_name, *to_name;
    struct node *from_dir = parent_of(from, &from_name), *to_dir = parent_of(to, &to_name);
    struct entry *source = from_dir ? find_entry(from_dir, from_name, strlen(from_name)) : NULL;
    if (!source || !to_dir) return -ENOENT;
    struct node *moved = source->node;
    struct entry *target = find_entry(to_dir, to_name, strlen(to_name));
    if (target == source) return 0;
    if (target) {
        if (flags & RENAME_NOREPLACE) return -EEXIST;
        if (S_ISDIR(target->node->mode) && target->node->now.count) return -ENOTEMPTY;
        target->node = moved;
        remove_entry(from_dir, find_entry(from_dir, from_name, strlen(from_name)));
    } else {
        remove_entry(from_dir, source);
        add_entry(to_dir, to_name, moved);
    }
    return 0;
}

static int fs_link(const char *from, const char *to) {
    struct node *node = lookup(from);
    if (!node) return -ENOENT;
    if (S_ISDIR(node->mode)) return -EPERM;
    const char *name;
    struct node *dir = parent_of(to, &name);
    if (!dir) return -ENOENT;
    if (find_entry(dir, name, strlen(name))) return -EEXIST;
    add_entry(dir, name, node);
    return 0;
}

static int fs_fsync(const char *path, int datasync, struct fuse_file_info *fi) {
    (void)datasync, (void)fi;
    struct node *node = lookup(path);
    if (!node) return -ENOENT;
    copy_bytes(&node->durable, &node->current);
    return 0;
}

static int fs_fsyncdir(const char *path, int datasync, struct fuse_file_info *fi) {
    (void)datasync, (void)fi;
    struct node *dir = lookup(path);
    if (!dir || !S_ISDIR(dir->mode)) return -ENOENT;
    copy_entries(&dir->synced, &dir->now);
    return 0;
}

static int fs_chmod(const char *path, mode_t mode, struct fuse_file_info *fi) {
    (void)fi;
    struct node *node = lookup(path);
    if (!node) return -ENOENT;
    node->mode = (node->mode & S_IFMT) | (mode & 07777);
    return 0;
}

static int fs_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi) {
    (void)uid, (void)gid, (void)fi;
    return lookup(path) ? 0 : -ENOENT;
}

static int fs_utimens(const char *path, const struct timespec times[2], struct fuse_file_info *fi) {
    (void)fi;
    struct node *node = lookup(path);
    if (!node) return -ENOENT;
    if (times && times[1].tv_nsec != UTIME_OMIT) node->mtime = times[1];
    return 0;
}

static int fs_statfs(const char *path, struct statvfs *st) {
    (void)path;
    memset(st, 0, sizeof *st);
    st->f_bsize = st->f_frsize = 4096;
    st->f_blocks = st->f_bfree = st->f_bavail = 1 << 22; // 16 GiB
    st->f_files = st->f_ffree = 1 << 20;
    st->f_namemax = 255;
    return 0;
}

static void *fs_init(struct fuse_conn_info *conn, struct fuse_config *config) {
    (void)conn;
    config->use_ino = 1;
    // No cached names or attributes: after a power loss the kernel must ask again.
    config->entry_timeout = config->attr_timeout = config->negative_timeout = 0;
    config->kernel_cache = 0;
    return NULL;
}

static const struct fuse_operations operations = {
    .init = fs_init,
    .getattr = fs_getattr,
    .readdir = fs_readdir,
    .mkdir = fs_mkdir,
    .mknod = fs_mknod,
    .create = fs_create,
    .open = fs_open,
    .read = fs_read,
    .write = fs_write,
    .truncate = fs_truncate,
    .unlink = fs_unlink,
    .rmdir = fs_rmdir,
    .rename = fs_rename,
    .link = fs_link,
    .fsync = fs_fsync,
    .fsyncdir = fs_fsyncdir,
    .chmod = fs_chmod,
    .chown = fs_chown,
    .utimens = fs_utimens,
    .statfs = fs_statfs,
};

int main(int argc, char *argv[]) {
    root = make_node(S_IFDIR | 0755);
    return fuse_main(argc, argv, &operations, NULL);
}
