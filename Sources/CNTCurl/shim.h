#ifndef NOUGHTYTOURS_CCURL_SHIM_H
#define NOUGHTYTOURS_CCURL_SHIM_H
#include <curl/curl.h>

/* curl_easy_setopt, curl_easy_getinfo and curl_multi_setopt are variadic, which Swift
   cannot call: one typed wrapper per argument type, so every option is set with the C type
   libcurl reads for it. */
static inline CURLcode nt_curl_easy_setopt_long(CURL *h, CURLoption o, long v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode nt_curl_easy_setopt_off(CURL *h, CURLoption o, curl_off_t v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode nt_curl_easy_setopt_string(CURL *h, CURLoption o, const char *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode nt_curl_easy_setopt_pointer(CURL *h, CURLoption o, void *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode nt_curl_easy_setopt_slist(CURL *h, CURLoption o, struct curl_slist *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode nt_curl_easy_setopt_write_callback(CURL *h, curl_write_callback v) { return curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, v); }
static inline CURLcode nt_curl_easy_setopt_read_callback(CURL *h, curl_read_callback v) { return curl_easy_setopt(h, CURLOPT_READFUNCTION, v); }
static inline CURLcode nt_curl_easy_setopt_header_callback(CURL *h, curl_write_callback v) { return curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, v); }
static inline CURLcode nt_curl_easy_setopt_xferinfo_callback(CURL *h, curl_xferinfo_callback v) { return curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, v); }
static inline CURLcode nt_curl_easy_getinfo_long(CURL *h, CURLINFO i, long *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode nt_curl_easy_getinfo_pointer(CURL *h, CURLINFO i, void **v) { return curl_easy_getinfo(h, i, v); }
static inline CURLMcode nt_curl_multi_setopt_long(CURLM *m, CURLMoption o, long v) { return curl_multi_setopt(m, o, v); }
/* CURLVERSION_NOW is a macro Swift cannot see. */
static inline const curl_version_info_data *nt_curl_version_info(void) { return curl_version_info(CURLVERSION_NOW); }
#endif
