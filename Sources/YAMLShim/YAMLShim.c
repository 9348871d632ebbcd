#include "YAMLShim.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <yaml.h>

// The libyaml functions this project calls, resolved once by cache_yaml_load.
static struct {
    int (*parser_initialize)(yaml_parser_t *);
    void (*parser_delete)(yaml_parser_t *);
    void (*set_input_string)(yaml_parser_t *, const unsigned char *, size_t);
    int (*parse)(yaml_parser_t *, yaml_event_t *);
    void (*event_delete)(yaml_event_t *);
} yaml;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static const char *load_failure = NULL;
static char load_message[512];

#define RESOLVE(library, field, name)                                                   \
    do {                                                                                \
        *(void **)(&yaml.field) = dlsym(library, name);                                 \
        if (yaml.field == NULL) {                                                       \
            snprintf(load_message, sizeof load_message, "libyaml lacks %s", name);      \
            load_failure = load_message;                                                \
            return;                                                                     \
        }                                                                               \
    } while (0)

static void load(void) {
    void *library = dlopen("libyaml-0.so.2", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        const char *reason = dlerror();
        snprintf(load_message, sizeof load_message, "cannot load libyaml-0.so.2 (install libyaml-0-2): %s",
                 reason ? reason : "not found");
        load_failure = load_message;
        return;
    }
    RESOLVE(library, parser_initialize, "yaml_parser_initialize");
    RESOLVE(library, parser_delete, "yaml_parser_delete");
    RESOLVE(library, set_input_string, "yaml_parser_set_input_string");
    RESOLVE(library, parse, "yaml_parser_parse");
    RESOLVE(library, event_delete, "yaml_event_delete");
}

const char *cache_yaml_load(void) {
    pthread_once(&load_once, load);
    return load_failure;
}

struct parser {
    yaml_parser_t parser;
    yaml_event_t event;
    int has_event;
};

void *cache_yaml_parser(const unsigned char *input, size_t size) {
    if (cache_yaml_load() != NULL) return NULL;
    struct parser *p = calloc(1, sizeof *p);
    if (p == NULL) return NULL;
    if (!yaml.parser_initialize(&p->parser)) { free(p); return NULL; }
    yaml.set_input_string(&p->parser, input, size);
    return p;
}

int cache_yaml_next(void *handle, cache_yaml_event *out) {
    struct parser *p = handle;
    if (p->has_event) { yaml.event_delete(&p->event); p->has_event = 0; }
    *out = (cache_yaml_event){0};
    if (!yaml.parse(&p->parser, &p->event)) return 0;
    p->has_event = 1;
    yaml_event_t *e = &p->event;
    out->line = e->start_mark.line;
    out->column = e->start_mark.column;
    switch (e->type) {
    case YAML_STREAM_START_EVENT: out->kind = CACHE_YAML_STREAM_START; break;
    case YAML_STREAM_END_EVENT: out->kind = CACHE_YAML_STREAM_END; break;
    case YAML_DOCUMENT_START_EVENT: out->kind = CACHE_YAML_DOCUMENT_START; break;
    case YAML_DOCUMENT_END_EVENT: out->kind = CACHE_YAML_DOCUMENT_END; break;
    case YAML_ALIAS_EVENT:
        out->kind = CACHE_YAML_ALIAS;
        out->anchor = (const char *)e->data.alias.anchor;
        break;
    case YAML_SCALAR_EVENT:
        out->kind = CACHE_YAML_SCALAR;
        out->anchor = (const char *)e->data.scalar.anchor;
        out->tag = (const char *)e->data.scalar.tag;
        out->value = e->data.scalar.value;
        out->length = e->data.scalar.length;
        out->plain = e->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
        break;
    case YAML_SEQUENCE_START_EVENT:
        out->kind = CACHE_YAML_SEQUENCE_START;
        out->anchor = (const char *)e->data.sequence_start.anchor;
        out->tag = (const char *)e->data.sequence_start.tag;
        break;
    case YAML_SEQUENCE_END_EVENT: out->kind = CACHE_YAML_SEQUENCE_END; break;
    case YAML_MAPPING_START_EVENT:
        out->kind = CACHE_YAML_MAPPING_START;
        out->anchor = (const char *)e->data.mapping_start.anchor;
        out->tag = (const char *)e->data.mapping_start.tag;
        break;
    case YAML_MAPPING_END_EVENT: out->kind = CACHE_YAML_MAPPING_END; break;
    default: out->kind = CACHE_YAML_NONE; break;
    }
    return 1;
}

const char *cache_yaml_problem(void *handle, size_t *line, size_t *column) {
    struct parser *p = handle;
    *line = p->parser.problem_mark.line;
    *column = p->parser.problem_mark.column;
    return p->parser.problem ? p->parser.problem : "not YAML";
}

void cache_yaml_free(void *handle) {
    struct parser *p = handle;
    if (p == NULL) return;
    if (p->has_event) yaml.event_delete(&p->event);
    yaml.parser_delete(&p->parser);
    free(p);
}
