#include <sqlite3.h>

// SQLITE_TRANSIENT is a macro Swift cannot import: it tells SQLite to copy a bound value.
static const sqlite3_destructor_type csqlite_transient = (sqlite3_destructor_type)-1;

// sqlite3_config is variadic, which Swift cannot call. Memory statistics take a global mutex
// on every allocation; this project never reads them. Effective only before the first open.
static inline int csqlite_disable_memory_statistics(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}
