#include <sqlite3.h>

// SQLITE_TRANSIENT is a macro Swift cannot import: it tells SQLite to copy a bound value.
static const sqlite3_destructor_type csqlite_transient = (sqlite3_destructor_type)-1;

// sqlite3_config is variadic, which Swift cannot call. Memory statistics take a global mutex
// on every allocation; this project never reads them. Effective only before the first open.
static inline int csqlite_disable_memory_statistics(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

// The WAL index: the start of the -shm file, which every connection to a WAL database maps. Its
// first region as this connection maps it, or NULL (not a WAL database, or not read yet). The
// mapping lasts as long as the connection. (Another file put at the path and opened has a -shm
// of its own, which SQLite may truncate: this mapping then reads zeros, "not initialised".)
static inline const volatile unsigned char *csqlite_wal_index(sqlite3 *db) {
    sqlite3_file *file = 0;
    if (sqlite3_file_control(db, "main", SQLITE_FCNTL_FILE_POINTER, &file) != SQLITE_OK || file == 0
        || file->pMethods == 0 || file->pMethods->iVersion < 2 || file->pMethods->xShmMap == 0) return 0;
    volatile void *region = 0;
    if (file->pMethods->xShmMap(file, 0, 32 * 1024, 0, &region) != SQLITE_OK) return 0;
    return (const volatile unsigned char *)region;
}

// The WAL-index header (48 bytes, kept twice; https://sqlite.org/walformat.html), read as SQLite's
// own readers read it (wal.c, walIndexTryHdr): the first copy, a barrier, the second. A writer
// writes the second, then the first. 1, with the header in `out`, when the two agree and it is
// initialised; 0 while a writer is between them.
static inline int csqlite_wal_index_header(const volatile unsigned char *index, unsigned char out[48]) {
    unsigned char second[48];
    for (int i = 0; i < 48; i++) out[i] = index[i];
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    for (int i = 0; i < 48; i++) second[i] = index[48 + i];
    for (int i = 0; i < 48; i++) if (out[i] != second[i]) return 0;
    return out[12] == 1;  // isInit
}
