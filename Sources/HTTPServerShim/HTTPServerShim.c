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
#include <sys/socket.h>
#include <time.h>
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

// A connection as the header watchdog sees it: by when its request's line and headers must
// have come (while it waits for them), and whether it was cut off.
struct watched {
    int fd;
    int waiting;      // for a request's line and headers
    int served;       // a request was answered on it before
    struct timespec opened;
    struct timespec deadline;
    char peer[64];    // the client's address, for the access log of a 408
    struct watched *next, *previous;
};

struct cache_http_server {
    struct MHD_Daemon *daemon;
    cache_http_handler handler;
    cache_http_screen screen;
    cache_http_cut_off cut_off;
    char *too_slow;   // the body of a 408 (the app's words)
    void *context;
    // The header watchdog: every connection, and a thread that cuts off those past their
    // deadline. libmicrohttpd's own timeout restarts on every byte, so a client trickling a
    // header line every few seconds would keep a connection (and its thread) for ever.
    pthread_mutex_t lock;
    struct watched *connections;
    pthread_t watchdog;
    int stopping;
    unsigned int header_seconds;
    unsigned int idle_seconds;
};

// Per request, from its line on: the target as sent (before any decoding, for the framing
// checks and the access log) and the body read so far.
struct request_state {
    char *target;
    // The target held a NUL: C's view of it ends there (see log_target).
    int target_cut;
    // It held another control byte, or a space.
    int target_control;
    // Where the library's view of the target ends in its buffer: the version must follow it.
    const char *target_end;
    unsigned char *body;
    size_t body_length;
    int started;
};

struct cache_http_response {
    struct MHD_Response *response;
};

cache_http_response *cache_http_buffer(const void *body, size_t length) {
    struct MHD_Response *response = mhd.create_response_from_buffer(length, (void *)body, MHD_RESPMEM_MUST_COPY);
    if (response == NULL) return NULL;
    cache_http_response *made = malloc(sizeof *made);
    if (made == NULL) {
        mhd.destroy_response(response);
        return NULL;
    }
    made->response = response;
    return made;
}

int cache_http_add_header(cache_http_response *response, const char *name, const char *value) {
    return mhd.add_response_header(response->response, name, value) == MHD_YES;
}

int cache_http_queue(struct MHD_Connection *connection, unsigned int status, cache_http_response *response) {
    int queued = mhd.queue_response(connection, status, response->response) == MHD_YES;
    mhd.destroy_response(response->response);
    free(response);
    return queued;
}

void cache_http_discard(cache_http_response *response) {
    mhd.destroy_response(response->response);
    free(response);
}

static int respond_now(struct MHD_Connection *connection, unsigned int status, const char *body) {
    cache_http_response *response = cache_http_buffer(body, strlen(body));
    if (response == NULL) return 0;
    if (!cache_http_add_header(response, "Content-Type", "application/json") || !cache_http_add_header(response, "Connection", "close")) {
        cache_http_discard(response);
        return 0;
    }
    return cache_http_queue(connection, status, response);
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

cache_http_response *cache_http_callback(cache_http_reader read, void *context, cache_http_release release) {
    struct stream_state *state = malloc(sizeof *state);
    cache_http_response *made = malloc(sizeof *made);
    if (state == NULL || made == NULL) {
        free(state);
        free(made);
        if (release) release(context);
        return NULL;
    }
    state->read = read;
    state->release = release;
    state->context = context;
    made->response = mhd.create_response_from_callback(MHD_SIZE_UNKNOWN, 16 * 1024, stream_read, state, stream_free);
    if (made->response == NULL) {
        free(made);
        stream_free(state);
        return NULL;
    }
    return made;
}

static void deadline_in(struct timespec *deadline, unsigned int seconds) {
    clock_gettime(CLOCK_MONOTONIC, deadline);
    deadline->tv_sec += seconds;
}

static struct watched *watched_of(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = mhd.get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info ? info->socket_context : NULL;
}

// A request has all come, its body too: no deadline while it is answered (a stream may be long).
static void watch_headers_done(struct MHD_Connection *connection) {
    struct watched *watched = watched_of(connection);
    if (watched != NULL) __atomic_store_n(&watched->waiting, 0, __ATOMIC_SEQ_CST);
}

// An answer is done: the next request on the connection, if one comes, has the idle time.
static void watch_next_request(struct cache_http_server *server, struct MHD_Connection *connection) {
    struct watched *watched = watched_of(connection);
    if (watched == NULL) return;
    pthread_mutex_lock(&server->lock);
    watched->served = 1;
    deadline_in(&watched->deadline, server->idle_seconds);
    __atomic_store_n(&watched->waiting, 1, __ATOMIC_SEQ_CST);
    pthread_mutex_unlock(&server->lock);
}

static void notify_connection(void *cls, struct MHD_Connection *connection, void **socket_context,
                              enum MHD_ConnectionNotificationCode code) {
    struct cache_http_server *server = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *info = mhd.get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
        struct watched *watched = calloc(1, sizeof *watched);
        if (watched == NULL || info == NULL) {
            free(watched);
            return;
        }
        watched->fd = info->connect_fd;
        watched->waiting = 1;
        cache_http_peer(connection, watched->peer, sizeof watched->peer);
        clock_gettime(CLOCK_MONOTONIC, &watched->opened);
        deadline_in(&watched->deadline, server->header_seconds);
        pthread_mutex_lock(&server->lock);
        watched->next = server->connections;
        if (server->connections) server->connections->previous = watched;
        server->connections = watched;
        pthread_mutex_unlock(&server->lock);
        *socket_context = watched;
    } else if (*socket_context != NULL) {
        struct watched *watched = *socket_context;
        pthread_mutex_lock(&server->lock);
        if (watched->previous) watched->previous->next = watched->next; else server->connections = watched->next;
        if (watched->next) watched->next->previous = watched->previous;
        pthread_mutex_unlock(&server->lock);
        free(watched);
        *socket_context = NULL;
    }
}

// Every quarter second: a connection past its deadline while it waits for a request's line and
// headers is cut off. On its first request it is told why (408, RFC 9110 §15.5.9); one idle
// between requests is closed as an idle connection is, with nothing sent, so a client reusing
// it never reads a 408 meant for no request of its.
static void *watchdog(void *cls) {
    struct cache_http_server *server = cls;
    char timeout[1024];
    int length = snprintf(timeout, sizeof timeout, "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Type: application/json\r\n"
                          "Content-Length: %zu\r\n\r\n%s", strlen(server->too_slow), server->too_slow);
    if (length < 0 || length >= (int)sizeof timeout) length = snprintf(timeout, sizeof timeout, "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
    // Those answered 408 this turn, told to the app once the lock is let go (its access log
    // writes). Room for every connection `serve` lets in (its default limit is 1024); past it
    // in one turn, the rest are cut off untold.
    struct { char peer[64]; double seconds; } answered[1024];
    while (1) {
        int count = 0;
        pthread_mutex_lock(&server->lock);
        int stopping = server->stopping;
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        for (struct watched *watched = server->connections; watched != NULL && !stopping; watched = watched->next) {
            if (!__atomic_load_n(&watched->waiting, __ATOMIC_SEQ_CST)) continue;
            if (now.tv_sec < watched->deadline.tv_sec || (now.tv_sec == watched->deadline.tv_sec && now.tv_nsec < watched->deadline.tv_nsec)) continue;
            if (!watched->served) {
                (void)!send(watched->fd, timeout, (size_t)length, MSG_DONTWAIT | MSG_NOSIGNAL);
                if (count < (int)(sizeof answered / sizeof answered[0])) {
                    memcpy(answered[count].peer, watched->peer, sizeof watched->peer);
                    answered[count].seconds = (double)(now.tv_sec - watched->opened.tv_sec) + (double)(now.tv_nsec - watched->opened.tv_nsec) / 1e9;
                    count++;
                }
            }
            shutdown(watched->fd, SHUT_RDWR);
            __atomic_store_n(&watched->waiting, 0, __ATOMIC_SEQ_CST);
        }
        pthread_mutex_unlock(&server->lock);
        for (int index = 0; index < count && server->cut_off != NULL; index++) {
            server->cut_off(server->context, answered[index].peer, answered[index].seconds);
        }
        if (stopping) return NULL;
        usleep(250 * 1000);
    }
}

static enum MHD_Result handle_request(void *cls, struct MHD_Connection *connection, const char *url, const char *method,
                              const char *version, const char *upload_data, size_t *upload_data_size, void **con_cls) {
    struct cache_http_server *server = cls;
    struct request_state *state = *con_cls;
    static const char too_large[] = "{\"error\": \"the request body is too large: no route takes one over 64 KiB\"}\n";
    if (state == NULL) return MHD_NO;  // the URI log made it; without it, no memory was left
    if (!state->started) {
        // The library cut the line at its last space, before the version, with a NUL of its
        // own, and the version follows it in the same buffer. Anything else there means a NUL
        // inside the target, which C reads as its end (`/rows/5<NUL>x` as `/rows/5`).
        state->target_cut = state->target_end == NULL || state->target_end + 1 != version;
        // A response can be queued now, before the body, or once it is all in: so a body
        // announced too large is refused here, and one that grows too large unannounced
        // (chunked) closes the connection.
        state->started = 1;
        const char *length = mhd.lookup_connection_value(connection, MHD_HEADER_KIND, "Content-Length");
        // What the app refuses before the body is read (its framing), it answers here: a body
        // it could not frame must not be read as one.
        // Only a request that has a body, or a target with a control byte, can be framed two
        // ways: the others (most, GETs) skip the screen and build their request once.
        const char *target = state->target ? state->target : url;
        int framed = length != NULL || state->target_cut || state->target_control
                     || mhd.lookup_connection_value(connection, MHD_HEADER_KIND, "Transfer-Encoding") != NULL;
        if (framed && server->screen(server->context, connection, method, url, target, state->target_cut)) return MHD_YES;
        if (length != NULL && strtoull(length, NULL, 10) > cache_http_max_body) {
            return respond_now(connection, 413, too_large) ? MHD_YES : MHD_NO;
        }
        return MHD_YES;
    }
    if (*upload_data_size != 0) {
        if (state->body_length + *upload_data_size > cache_http_max_body) return MHD_NO;
        unsigned char *grown = realloc(state->body, state->body_length + *upload_data_size);
        if (grown == NULL) return MHD_NO;
        memcpy(grown + state->body_length, upload_data, *upload_data_size);
        state->body = grown;
        state->body_length += *upload_data_size;
        *upload_data_size = 0;
        return MHD_YES;
    }
    // The whole request is in (line, headers and body): no deadline while it is answered.
    watch_headers_done(connection);
    return server->handler(server->context, connection, method, url, state->target ? state->target : url, state->target_cut,
                           state->body, state->body_length) ? MHD_YES : MHD_NO;
}

// Called with the request's target as it came, before the library decodes it: kept, so the
// app sees what was sent (a control byte, the query as written), and the request's state
// made here.
static void *log_target(void *cls, const char *uri, struct MHD_Connection *connection) {
    (void)cls;
    (void)connection;
    struct request_state *state = calloc(1, sizeof *state);
    if (state == NULL) return NULL;
    state->target = strdup(uri ? uri : "");
    // Where C's view of the target ends: the first call checks the version follows it.
    if (uri != NULL) state->target_end = uri + strlen(uri);
    for (const unsigned char *byte = (const unsigned char *)state->target; byte && *byte; byte++) {
        if (*byte < 0x21 || *byte == 0x7F) state->target_control = 1;
    }
    return state;
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
    (void)code;
    watch_next_request(cls, connection);
    struct request_state *state = *con_cls;
    if (state != NULL) {
        free(state->target);
        free(state->body);
        free(state);
    }
    *con_cls = NULL;
}

cache_http_server *cache_http_start(const char *address, unsigned short port, unsigned int connection_limit,
                                    unsigned int per_client_limit, unsigned int idle_timeout_seconds, unsigned int header_seconds,
                                    size_t header_memory, cache_http_handler handler, cache_http_screen screen,
                                    cache_http_cut_off cut_off, const char *too_slow_body, void *context, char *error, size_t error_size) {
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
    server->screen = screen;
    server->cut_off = cut_off;
    server->too_slow = strdup(too_slow_body ? too_slow_body : "");
    if (server->too_slow == NULL) {
        snprintf(error, error_size, "out of memory");
        free(server);
        return NULL;
    }
    server->context = context;
    server->header_seconds = header_seconds;
    server->idle_seconds = idle_timeout_seconds;
    pthread_mutex_init(&server->lock, NULL);
    server->daemon = mhd.start_daemon(flags, port, NULL, NULL, handle_request, server,
                                      MHD_OPTION_SOCK_ADDR, socket_address,
                                      MHD_OPTION_CONNECTION_LIMIT, connection_limit,
                                      MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_client_limit,
                                      MHD_OPTION_CONNECTION_TIMEOUT, idle_timeout_seconds,
                                      MHD_OPTION_CONNECTION_MEMORY_LIMIT, header_memory,
                                      MHD_OPTION_THREAD_STACK_SIZE, (size_t)(1024 * 1024),
                                      MHD_OPTION_LISTEN_BACKLOG_SIZE, 1024u,
                                      MHD_OPTION_NOTIFY_COMPLETED, completed, server,
                                      MHD_OPTION_UNESCAPE_CALLBACK, unescape, NULL,
                                      MHD_OPTION_URI_LOG_CALLBACK, log_target, NULL,
                                      MHD_OPTION_NOTIFY_CONNECTION, notify_connection, server,
                                      MHD_OPTION_END);
    if (server->daemon == NULL) {
        snprintf(error, error_size, "cannot listen on %s port %u (in use, or not an address of this machine)", address, port);
        free(server->too_slow);
        free(server);
        return NULL;
    }
    if (pthread_create(&server->watchdog, NULL, watchdog, server) != 0) {
        snprintf(error, error_size, "cannot start the header watchdog's thread");
        mhd.stop_daemon(server->daemon);
        free(server->too_slow);
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
    pthread_mutex_lock(&server->lock);
    server->stopping = 1;
    pthread_mutex_unlock(&server->lock);
    pthread_join(server->watchdog, NULL);
    mhd.stop_daemon(server->daemon);
    free(server->too_slow);
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

void cache_http_headers(struct MHD_Connection *connection, cache_http_pair each, void *context) {
    struct pair_context pairs = {each, context};
    mhd.get_connection_values(connection, MHD_HEADER_KIND, each_pair, &pairs);
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
