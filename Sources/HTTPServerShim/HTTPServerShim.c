#define _GNU_SOURCE  // POLLRDHUP
#include "HTTPServerShim.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// The libmicrohttpd functions this project calls, resolved once by cache_http_load.
static struct {
    const char *(*get_version)(void);
    struct MHD_Daemon *(*start_daemon)(unsigned int flags, uint16_t port, MHD_AcceptPolicyCallback apc, void *apc_cls,
                                       MHD_AccessHandlerCallback dh, void *dh_cls, ...);
    void (*stop_daemon)(struct MHD_Daemon *);
    MHD_socket (*quiesce_daemon)(struct MHD_Daemon *);
    const union MHD_DaemonInfo *(*get_daemon_info)(struct MHD_Daemon *, enum MHD_DaemonInfoType, ...);
    const union MHD_ConnectionInfo *(*get_connection_info)(struct MHD_Connection *, enum MHD_ConnectionInfoType, ...);
    const char *(*lookup_connection_value)(struct MHD_Connection *, enum MHD_ValueKind, const char *);
    int (*get_connection_values)(struct MHD_Connection *, enum MHD_ValueKind, MHD_KeyValueIterator, void *);
    struct MHD_Response *(*create_response_from_buffer)(size_t, void *, enum MHD_ResponseMemoryMode);
    struct MHD_Response *(*create_response_from_callback)(uint64_t, size_t, MHD_ContentReaderCallback, void *,
                                                          MHD_ContentReaderFreeCallback);
    enum MHD_Result (*add_response_header)(struct MHD_Response *, const char *, const char *);
    enum MHD_Result (*queue_response)(struct MHD_Connection *, unsigned int, struct MHD_Response *);
    void (*destroy_response)(struct MHD_Response *);
} mhd;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static const char *load_failure = NULL;
static char load_message[512];

#define RESOLVE(library, field, name)                                                        \
    do {                                                                                     \
        *(void **)(&mhd.field) = dlsym(library, name);                                       \
        if (mhd.field == NULL) {                                                             \
            snprintf(load_message, sizeof load_message, "libmicrohttpd lacks %s", name);     \
            load_failure = load_message;                                                     \
            return;                                                                          \
        }                                                                                    \
    } while (0)

static void load(void) {
    void *library = dlopen("libmicrohttpd.so.12", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        const char *reason = dlerror();
        snprintf(load_message, sizeof load_message,
                 "cannot load libmicrohttpd.so.12, which 'cache serve' needs (install libmicrohttpd12): %s",
                 reason ? reason : "not found");
        load_failure = load_message;
        return;
    }
    RESOLVE(library, get_version, "MHD_get_version");
    RESOLVE(library, start_daemon, "MHD_start_daemon");
    RESOLVE(library, stop_daemon, "MHD_stop_daemon");
    RESOLVE(library, quiesce_daemon, "MHD_quiesce_daemon");
    RESOLVE(library, get_daemon_info, "MHD_get_daemon_info");
    RESOLVE(library, get_connection_info, "MHD_get_connection_info");
    RESOLVE(library, lookup_connection_value, "MHD_lookup_connection_value");
    RESOLVE(library, get_connection_values, "MHD_get_connection_values");
    RESOLVE(library, create_response_from_buffer, "MHD_create_response_from_buffer");
    RESOLVE(library, create_response_from_callback, "MHD_create_response_from_callback");
    RESOLVE(library, add_response_header, "MHD_add_response_header");
    RESOLVE(library, queue_response, "MHD_queue_response");
    RESOLVE(library, destroy_response, "MHD_destroy_response");
    // A client that goes away must fail a write, not kill the server.
    signal(SIGPIPE, SIG_IGN);
}

const char *cache_http_load(void) {
    pthread_once(&load_once, load);
    return load_failure;
}

const char *cache_http_version(void) {
    return cache_http_load() == NULL ? mhd.get_version() : NULL;
}

const unsigned long long cache_http_max_body = 64 * 1024;

struct cache_http_server {
    struct MHD_Daemon *daemon;
    cache_http_handler handler;
    void *context;
};

// Per request: the body bytes read so far (and dropped).
struct request_state {
    unsigned long long body;
};

static int add_headers(struct MHD_Response *response, const char *headers) {
    if (headers == NULL) return 1;
    const char *line = headers;
    while (*line) {
        const char *end = strchr(line, '\n');
        size_t length = end ? (size_t)(end - line) : strlen(line);
        const char *colon = memchr(line, ':', length);
        if (colon != NULL) {
            char name[256];
            size_t name_length = (size_t)(colon - line);
            if (name_length >= sizeof name) return 0;
            memcpy(name, line, name_length);
            name[name_length] = 0;
            const char *value = colon + 1;
            while (*value == ' ' && value < line + length) value++;
            size_t value_length = (size_t)(line + length - value);
            char *copy = malloc(value_length + 1);
            if (copy == NULL) return 0;
            memcpy(copy, value, value_length);
            copy[value_length] = 0;
            int added = mhd.add_response_header(response, name, copy) == MHD_YES;
            free(copy);
            if (!added) return 0;
        }
        if (end == NULL) break;
        line = end + 1;
    }
    return 1;
}

int cache_http_respond(struct MHD_Connection *connection, unsigned int status, const char *headers,
                       const void *body, size_t length) {
    struct MHD_Response *response = mhd.create_response_from_buffer(length, (void *)body, MHD_RESPMEM_MUST_COPY);
    if (response == NULL) return 0;
    int queued = add_headers(response, headers) && mhd.queue_response(connection, status, response) == MHD_YES;
    mhd.destroy_response(response);
    return queued;
}

struct stream_state {
    cache_http_reader read;
    cache_http_release release;
    void *context;
};

static ssize_t stream_read(void *cls, uint64_t position, char *buffer, size_t size) {
    struct stream_state *state = cls;
    long count = state->read(state->context, position, buffer, size);
    if (count == -1) return MHD_CONTENT_READER_END_OF_STREAM;
    if (count < 0) return MHD_CONTENT_READER_END_WITH_ERROR;
    return (ssize_t)count;
}

static void stream_free(void *cls) {
    struct stream_state *state = cls;
    if (state->release) state->release(state->context);
    free(state);
}

int cache_http_stream(struct MHD_Connection *connection, unsigned int status, const char *headers,
                      cache_http_reader read, void *context, cache_http_release release) {
    struct stream_state *state = malloc(sizeof *state);
    if (state == NULL) {
        if (release) release(context);
        return 0;
    }
    state->read = read;
    state->release = release;
    state->context = context;
    struct MHD_Response *response = mhd.create_response_from_callback(MHD_SIZE_UNKNOWN, 16 * 1024, stream_read, state, stream_free);
    if (response == NULL) {
        stream_free(state);
        return 0;
    }
    int queued = add_headers(response, headers) && mhd.queue_response(connection, status, response) == MHD_YES;
    mhd.destroy_response(response);
    return queued;
}

static enum MHD_Result handle_request(void *cls, struct MHD_Connection *connection, const char *url, const char *method,
                              const char *version, const char *upload_data, size_t *upload_data_size, void **con_cls) {
    (void)version;
    (void)upload_data;
    struct cache_http_server *server = cls;
    struct request_state *state = *con_cls;
    static const char refusal[] = "{\"error\": \"the request body is too large: no route takes one over 64 KiB\"}\n";
    if (state == NULL) {
        // A response can be queued now, before the body, or once it is all in: so a body
        // announced too large is refused here, and one that grows too large unannounced
        // (chunked) closes the connection.
        const char *length = mhd.lookup_connection_value(connection, MHD_HEADER_KIND, "Content-Length");
        if (length != NULL && strtoull(length, NULL, 10) > cache_http_max_body) {
            return cache_http_respond(connection, 413, "Content-Type: application/json\nConnection: close\n",
                                      refusal, sizeof refusal - 1) ? MHD_YES : MHD_NO;
        }
        state = calloc(1, sizeof *state);
        if (state == NULL) return MHD_NO;
        *con_cls = state;
        return MHD_YES;
    }
    if (*upload_data_size != 0) {
        state->body += *upload_data_size;
        *upload_data_size = 0;
        return state->body > cache_http_max_body ? MHD_NO : MHD_YES;
    }
    return server->handler(server->context, connection, method, url) ? MHD_YES : MHD_NO;
}

// Percent-decoding in place, as the library's own, but for %00: a NUL would end the text there
// and make `/rows/5%00x` read as `/rows/5`. It stays as the three characters it was.
static int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static size_t unescape(void *cls, struct MHD_Connection *connection, char *text) {
    (void)cls;
    (void)connection;
    char *out = text;
    for (const char *in = text; *in; ) {
        int high, low;
        if (in[0] == '%' && (high = hex_digit(in[1])) >= 0 && (low = hex_digit(in[2])) >= 0 && (high | low) != 0) {
            *out++ = (char)(high * 16 + low);
            in += 3;
        } else {
            *out++ = *in++;
        }
    }
    *out = 0;
    return (size_t)(out - text);
}

static void completed(void *cls, struct MHD_Connection *connection, void **con_cls, enum MHD_RequestTerminationCode code) {
    (void)cls;
    (void)connection;
    (void)code;
    free(*con_cls);
    *con_cls = NULL;
}

cache_http_server *cache_http_start(const char *address, unsigned short port, unsigned int connection_limit,
                                    unsigned int idle_timeout_seconds, size_t header_memory,
                                    cache_http_handler handler, void *context, char *error, size_t error_size) {
    const char *failure = cache_http_load();
    if (failure != NULL) {
        snprintf(error, error_size, "%s", failure);
        return NULL;
    }
    struct sockaddr_in v4;
    struct sockaddr_in6 v6;
    struct sockaddr *socket_address;
    unsigned int flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_ITC;
    memset(&v4, 0, sizeof v4);
    memset(&v6, 0, sizeof v6);
    if (inet_pton(AF_INET, address, &v4.sin_addr) == 1) {
        v4.sin_family = AF_INET;
        v4.sin_port = htons(port);
        socket_address = (struct sockaddr *)&v4;
    } else if (inet_pton(AF_INET6, address, &v6.sin6_addr) == 1) {
        v6.sin6_family = AF_INET6;
        v6.sin6_port = htons(port);
        socket_address = (struct sockaddr *)&v6;
        flags |= MHD_USE_IPv6;
    } else {
        snprintf(error, error_size, "'%s' is not an IP address", address);
        return NULL;
    }
    struct cache_http_server *server = calloc(1, sizeof *server);
    if (server == NULL) {
        snprintf(error, error_size, "out of memory");
        return NULL;
    }
    server->handler = handler;
    server->context = context;
    server->daemon = mhd.start_daemon(flags, port, NULL, NULL, handle_request, server,
                                      MHD_OPTION_SOCK_ADDR, socket_address,
                                      MHD_OPTION_CONNECTION_LIMIT, connection_limit,
                                      MHD_OPTION_CONNECTION_TIMEOUT, idle_timeout_seconds,
                                      MHD_OPTION_CONNECTION_MEMORY_LIMIT, header_memory,
                                      MHD_OPTION_THREAD_STACK_SIZE, (size_t)(1024 * 1024),
                                      MHD_OPTION_LISTEN_BACKLOG_SIZE, 1024u,
                                      MHD_OPTION_NOTIFY_COMPLETED, completed, NULL,
                                      MHD_OPTION_UNESCAPE_CALLBACK, unescape, NULL,
                                      MHD_OPTION_END);
    if (server->daemon == NULL) {
        snprintf(error, error_size, "cannot listen on %s port %u (in use, or not an address of this machine)", address, port);
        free(server);
        return NULL;
    }
    return server;
}

unsigned short cache_http_port(cache_http_server *server) {
    const union MHD_DaemonInfo *info = mhd.get_daemon_info(server->daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info ? info->port : 0;
}

void cache_http_quiesce(cache_http_server *server) {
    MHD_socket listening = mhd.quiesce_daemon(server->daemon);
    if (listening != MHD_INVALID_SOCKET) close(listening);
}

unsigned int cache_http_open_connections(cache_http_server *server) {
    const union MHD_DaemonInfo *info = mhd.get_daemon_info(server->daemon, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
    return info ? info->num_connections : 0;
}

void cache_http_stop(cache_http_server *server) {
    mhd.stop_daemon(server->daemon);
    free(server);
}

const char *cache_http_header(struct MHD_Connection *connection, const char *name) {
    return mhd.lookup_connection_value(connection, MHD_HEADER_KIND, name);
}

struct pair_context {
    cache_http_pair each;
    void *context;
};

static enum MHD_Result each_pair(void *cls, enum MHD_ValueKind kind, const char *key, const char *value) {
    (void)kind;
    struct pair_context *pairs = cls;
    pairs->each(pairs->context, key, value);
    return MHD_YES;
}

void cache_http_arguments(struct MHD_Connection *connection, cache_http_pair each, void *context) {
    struct pair_context pairs = {each, context};
    mhd.get_connection_values(connection, MHD_GET_ARGUMENT_KIND, each_pair, &pairs);
}

int cache_http_peer_gone(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = mhd.get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (info == NULL) return 0;
    struct pollfd peer = {.fd = info->connect_fd, .events = POLLRDHUP};
    return poll(&peer, 1, 0) > 0 && (peer.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
}

void cache_http_peer(struct MHD_Connection *connection, char *buffer, size_t size) {
    buffer[0] = 0;
    const union MHD_ConnectionInfo *info = mhd.get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (info == NULL || info->client_addr == NULL) return;
    const struct sockaddr *peer = info->client_addr;
    if (peer->sa_family == AF_INET) {
        inet_ntop(AF_INET, &((const struct sockaddr_in *)peer)->sin_addr, buffer, (socklen_t)size);
    } else if (peer->sa_family == AF_INET6) {
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)peer)->sin6_addr, buffer, (socklen_t)size);
    }
}
