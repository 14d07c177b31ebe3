#ifndef NOUGHTYTOURS_CSQLITE_SHIM_H
#define NOUGHTYTOURS_CSQLITE_SHIM_H
#include <sqlite3.h>

/* sqlite3_db_config is variadic, which Swift cannot call: one typed wrapper per use. */
static inline int nt_sqlite3_db_config_int(sqlite3 *db, int op, int value, int *result) {
    return sqlite3_db_config(db, op, value, result);
}
#endif
