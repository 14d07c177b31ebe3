#ifndef NOUGHTYTOURS_CSQLITE_SHIM_H
#define NOUGHTYTOURS_CSQLITE_SHIM_H
#include <sqlite3.h>

/* sqlite3_db_config is variadic, which Swift cannot call: one typed wrapper per use. */
static inline int nt_sqlite3_db_config_int(sqlite3 *db, int op, int value, int *result) {
    return sqlite3_db_config(db, op, value, result);
}

/* The descriptor of a file SQLite's "unix" VFS opened. os_unix.c's unixFile begins with its
   methods, its VFS, its inode record and then the descriptor, unchanged since 2008 but not
   public: the caller checks (fstat) that it is the file opened before using it. */
static inline int nt_sqlite3_unix_descriptor(sqlite3_file *file) {
    struct unix_file_head { const sqlite3_io_methods *methods; sqlite3_vfs *vfs; void *inode; int descriptor; };
    return ((struct unix_file_head *)file)->descriptor;
}
#endif
