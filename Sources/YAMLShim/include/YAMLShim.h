#ifndef CACHE_YAML_SHIM_H
#define CACHE_YAML_SHIM_H

// libyaml's parser, loaded on first use (`cache import`), so no other command loads it.
//
// The events of a YAML stream, one at a time, with what Swift needs of each: the shim owns
// the current event and frees it at the next call.

#include <stddef.h>

// Loads libyaml-0.so.2 once, thread-safely. NULL on success; else why it failed.
const char *cache_yaml_load(void);

enum cache_yaml_kind {
    CACHE_YAML_NONE = 0,
    CACHE_YAML_STREAM_START, CACHE_YAML_STREAM_END,
    CACHE_YAML_DOCUMENT_START, CACHE_YAML_DOCUMENT_END,
    CACHE_YAML_ALIAS, CACHE_YAML_SCALAR,
    CACHE_YAML_SEQUENCE_START, CACHE_YAML_SEQUENCE_END,
    CACHE_YAML_MAPPING_START, CACHE_YAML_MAPPING_END,
};

typedef struct {
    int kind;                      // a cache_yaml_kind
    const char *anchor;            // an alias's target, or the anchor a node defines; NULL if none
    const char *tag;               // the node's explicit tag, if any
    const unsigned char *value;    // a scalar's bytes (not NUL-terminated)
    size_t length;
    int plain;                     // a plain (unquoted) scalar: its type is read from its text
    size_t line, column;           // where it starts, from 0
} cache_yaml_event;

// A parser over `size` bytes the caller keeps alive until cache_yaml_free. NULL if out of memory.
void *cache_yaml_parser(const unsigned char *input, size_t size);
// The next event: 1, or 0 on a syntax error (then cache_yaml_problem says what and where).
int cache_yaml_next(void *parser, cache_yaml_event *event);
const char *cache_yaml_problem(void *parser, size_t *line, size_t *column);
void cache_yaml_free(void *parser);

#endif
