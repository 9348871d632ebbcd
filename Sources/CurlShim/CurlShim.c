#include "CurlShim.h"

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>

// The libcurl functions this project calls, resolved once by cache_curl_load.
static struct {
    CURLcode (*global_init)(long flags);
    char *(*version)(void);
    CURL *(*easy_init)(void);
    void (*easy_cleanup)(CURL *);
    void (*easy_reset)(CURL *);
    CURLcode (*easy_perform)(CURL *);
    const char *(*easy_strerror)(CURLcode);
    CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
    CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
    struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
    void (*slist_free_all)(struct curl_slist *);
} curl;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static const char *load_failure = NULL;
static char load_message[512];

#define RESOLVE(library, field, name)                                                   \
    do {                                                                                \
        *(void **)(&curl.field) = dlsym(library, name);                                 \
        if (curl.field == NULL) {                                                       \
            snprintf(load_message, sizeof load_message, "libcurl lacks %s", name);      \
            load_failure = load_message;                                                \
            return;                                                                     \
        }                                                                               \
    } while (0)

static void load(void) {
    void *library = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        const char *reason = dlerror();
        snprintf(load_message, sizeof load_message, "cannot load libcurl.so.4 (install libcurl4): %s",
                 reason ? reason : "not found");
        load_failure = load_message;
        return;
    }
    RESOLVE(library, global_init, "curl_global_init");
    RESOLVE(library, version, "curl_version");
    RESOLVE(library, easy_init, "curl_easy_init");
    RESOLVE(library, easy_cleanup, "curl_easy_cleanup");
    RESOLVE(library, easy_reset, "curl_easy_reset");
    RESOLVE(library, easy_perform, "curl_easy_perform");
    RESOLVE(library, easy_strerror, "curl_easy_strerror");
    RESOLVE(library, easy_setopt, "curl_easy_setopt");
    RESOLVE(library, easy_getinfo, "curl_easy_getinfo");
    RESOLVE(library, slist_append, "curl_slist_append");
    RESOLVE(library, slist_free_all, "curl_slist_free_all");
    // A peer that closes its end must fail a write, not kill the process: TLS libraries can
    // write to a socket without MSG_NOSIGNAL.
    signal(SIGPIPE, SIG_IGN);
    if (curl.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        load_failure = "libcurl failed to initialise";
    }
}

const char *cache_curl_load(void) {
    pthread_once(&load_once, load);
    return load_failure;
}

const char *cache_curl_header_version(void) { return LIBCURL_VERSION; }

const char *cache_curl_version(void) {
    return cache_curl_load() == NULL ? curl.version() : NULL;
}

CURL *cache_curl_easy_init(void) { return curl.easy_init(); }
void cache_curl_easy_cleanup(CURL *handle) { curl.easy_cleanup(handle); }
void cache_curl_easy_reset(CURL *handle) { curl.easy_reset(handle); }
CURLcode cache_curl_easy_perform(CURL *handle) { return curl.easy_perform(handle); }
const char *cache_curl_easy_strerror(CURLcode code) { return curl.easy_strerror(code); }

CURLcode cache_curl_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl.easy_setopt(handle, option, value);
}
CURLcode cache_curl_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl.easy_setopt(handle, option, value);
}
CURLcode cache_curl_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl.easy_setopt(handle, option, value);
}
CURLcode cache_curl_setopt_callback(CURL *handle, CURLoption option, cache_curl_data_callback callback) {
    return curl.easy_setopt(handle, option, callback);
}

CURLcode cache_curl_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl.easy_getinfo(handle, info, value);
}
CURLcode cache_curl_getinfo_string(CURL *handle, CURLINFO info, char **value) {
    return curl.easy_getinfo(handle, info, value);
}

struct curl_slist *cache_curl_slist_append(struct curl_slist *list, const char *line) {
    return curl.slist_append(list, line);
}
void cache_curl_slist_free_all(struct curl_slist *list) { curl.slist_free_all(list); }
