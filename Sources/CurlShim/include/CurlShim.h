#ifndef CACHE_CURL_SHIM_H
#define CACHE_CURL_SHIM_H

// libcurl, loaded on first use and called through non-variadic wrappers.
//
// Swift cannot call C's variadic functions (curl_easy_setopt, curl_easy_getinfo), so each use
// has a typed wrapper here. libcurl and the libraries it needs (OpenSSL, nghttp2, libssh2, LDAP,
// ...) cost a process more to load and relocate than `cache list` costs in all (figures:
// docs/performance.md);
// so `cache` does not link libcurl: the first fetch loads libcurl.so.4 with dlopen.

#include <curl/curl.h>
#include <stddef.h>

// Loads libcurl and initialises it once, thread-safely. NULL on success; else why it failed.
const char *cache_curl_load(void);

// libcurl's version text ("libcurl/7.88.1 OpenSSL/3.0.19 ..."), loading it; NULL if it cannot be.
const char *cache_curl_version(void);

// The version of the libcurl headers this was built against ("7.88.1"), without loading libcurl.
const char *cache_curl_header_version(void);

CURL *cache_curl_easy_init(void);
void cache_curl_easy_cleanup(CURL *handle);
// Clears a handle's options and keeps its connections (and DNS cache) for the next transfer.
void cache_curl_easy_reset(CURL *handle);
CURLcode cache_curl_easy_perform(CURL *handle);
const char *cache_curl_easy_strerror(CURLcode code);

CURLcode cache_curl_setopt_long(CURL *handle, CURLoption option, long value);
CURLcode cache_curl_setopt_string(CURL *handle, CURLoption option, const char *value);
CURLcode cache_curl_setopt_pointer(CURL *handle, CURLoption option, void *value);

typedef size_t (*cache_curl_data_callback)(char *bytes, size_t size, size_t count, void *context);
CURLcode cache_curl_setopt_callback(CURL *handle, CURLoption option, cache_curl_data_callback callback);

CURLcode cache_curl_getinfo_long(CURL *handle, CURLINFO info, long *value);
CURLcode cache_curl_getinfo_string(CURL *handle, CURLINFO info, char **value);

struct curl_slist *cache_curl_slist_append(struct curl_slist *list, const char *line);
void cache_curl_slist_free_all(struct curl_slist *list);

#endif
