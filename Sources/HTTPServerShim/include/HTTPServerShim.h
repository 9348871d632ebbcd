#ifndef CACHE_HTTP_SERVER_SHIM_H
#define CACHE_HTTP_SERVER_SHIM_H

// GNU libmicrohttpd, loaded by `cache serve` only and called through a small API of its own.
//
// No other command pays for it: `cache` does not link libmicrohttpd, and a machine without it
// runs every other command; `serve` says which package to install. The server runs one thread
// per connection (bounded in number, with an idle timeout), so a handler, a stream of events or
// a `Prefer: wait` may block its own connection without holding up any other.

#include <stddef.h>

struct MHD_Connection;
typedef struct cache_http_server cache_http_server;

// Loads libmicrohttpd once, thread-safely. NULL on success; else why it failed (one line).
const char *cache_http_load(void);

// The library's version ("0.9.75"), loading it; NULL if it cannot be loaded.
const char *cache_http_version(void);

// Called once per request, once its headers and its body (at most `cache_http_max_body`
// bytes) have come: `path` decoded, `target` as sent (`target_cut`: it held a NUL, and C sees
// only what came before). Returns what cache_http_queue returned.
typedef int (*cache_http_handler)(void *context, struct MHD_Connection *connection, const char *method, const char *path,
                                  const char *target, int target_cut, const unsigned char *body, size_t body_length);
// Called once per request as soon as its headers have come, before its body is read: 1 when it
// has queued an answer (a refusal; the body is then never read), 0 to go on.
typedef int (*cache_http_screen)(void *context, struct MHD_Connection *connection, const char *method, const char *path,
                                 const char *target, int target_cut);

// Called when the header watchdog has answered a connection's first request 408 (its line and
// headers did not come in time) and closed it: `peer` the client's address, `seconds` the time
// it was given. Called on the watchdog's thread, outside its lock.
typedef void (*cache_http_cut_off)(void *context, const char *peer, double seconds);

// The largest request body taken; a larger one is answered 413 by the shim itself.
extern const unsigned long long cache_http_max_body;

// Listens on `address` (an IPv4 or IPv6 literal) and `port` (0: a free one), with at most
// `connection_limit` connections open, `per_client_limit` of them from one address. A
// connection's first request line and headers must come within `header_seconds` of its
// opening (else 408 with `too_slow_body`, JSON, and it is closed); a later request's within `idle_timeout_seconds` of the
// answer before it. NULL when it cannot, with why in `error`.
cache_http_server *cache_http_start(const char *address, unsigned short port, unsigned int connection_limit,
                                    unsigned int per_client_limit, unsigned int idle_timeout_seconds, unsigned int header_seconds,
                                    size_t header_memory, cache_http_handler handler, cache_http_screen screen,
                                    cache_http_cut_off cut_off, const char *too_slow_body, void *context, char *error, size_t error_size);
// The port it listens on.
unsigned short cache_http_port(cache_http_server *server);
// Stops accepting connections; those open go on.
void cache_http_quiesce(cache_http_server *server);
// Connections open now (requests in flight, idle keep-alive connections and event streams).
unsigned int cache_http_open_connections(cache_http_server *server);
// Closes every connection and frees the server.
void cache_http_stop(cache_http_server *server);

// A request header by name (any case), or NULL.
const char *cache_http_header(struct MHD_Connection *connection, const char *name);
// Every query argument in order, decoded: `value` is NULL for `?flag`.
typedef void (*cache_http_pair)(void *context, const char *name, const char *value);
void cache_http_arguments(struct MHD_Connection *connection, cache_http_pair each, void *context);
// Whether the client has closed its end (or the connection broke): for a stream that waits.
int cache_http_peer_gone(struct MHD_Connection *connection);
// The peer's address as text ("127.0.0.1"), into `buffer`.
void cache_http_peer(struct MHD_Connection *connection, char *buffer, size_t size);

// Every request header in order, duplicates too.
void cache_http_headers(struct MHD_Connection *connection, cache_http_pair each, void *context);

// A response being made: its body, then its headers one call each, then queued (which frees it).
typedef struct cache_http_response cache_http_response;
// A whole body, copied. NULL when out of memory.
cache_http_response *cache_http_buffer(const void *body, size_t length);
// A body that `read` makes as it goes: it fills at most `size` bytes and returns how many (it
// may block, on this connection's own thread), -1 at the end, -2 to abort. `release` is called
// once, when the response is done with (at once, when this returns NULL).
typedef long (*cache_http_reader)(void *context, unsigned long long position, char *buffer, size_t size);
typedef void (*cache_http_release)(void *context);
cache_http_response *cache_http_callback(cache_http_reader read, void *context, cache_http_release release);
// One header; 0 when the library refuses it (a control character in it, say).
int cache_http_add_header(cache_http_response *response, const char *name, const char *value);
// Queues the response and frees it. Returns 1 when queued.
int cache_http_queue(struct MHD_Connection *connection, unsigned int status, cache_http_response *response);
// Frees a response that will not be queued.
void cache_http_discard(cache_http_response *response);

#endif
