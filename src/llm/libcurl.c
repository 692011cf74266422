/* SPDX-License-Identifier: MIT */
/*
 * libcurl, loaded when the first model client is made rather than when heal starts. Linked
 * normally, libcurl brings about thirty shared libraries (TLS, Kerberos, LDAP, SSH, ...) whose
 * loading and constructors cost every heal process about 4 ms, `heal run` included, which never
 * talks to a model. The API is the same; each function is reached through the table.
 * See: dlopen(3), https://curl.se/libcurl/c/ (the functions below, libcurl >= 7.74).
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "llm/llm-internal.h"

struct libcurl lc;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char load_error[256];

#define SYM(field, name)                \
 do {                                   \
  *(void **)&lc.field = dlsym(h, name); \
  if (!lc.field) {                      \
   missing = name;                      \
   goto fail;                           \
  }                                     \
 } while (0)

static void load(void)
{
        static const char *const names[] = { "libcurl.so.4", "libcurl-gnutls.so.4" };
        const char *missing = NULL;
        void *h = NULL;

        for (size_t i = 0; !h && i < sizeof(names) / sizeof(names[0]); i++)
                h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (!h) {
                snprintf(load_error, sizeof(load_error),
                         "cannot load libcurl (%s); install it: apt-get install libcurl4",
                         dlerror());
                return;
        }
        SYM(global_init, "curl_global_init");
        SYM(easy_init, "curl_easy_init");
        SYM(easy_cleanup, "curl_easy_cleanup");
        SYM(easy_reset, "curl_easy_reset");
        SYM(easy_setopt, "curl_easy_setopt");
        SYM(easy_getinfo, "curl_easy_getinfo");
        SYM(easy_strerror, "curl_easy_strerror");
        SYM(slist_append, "curl_slist_append");
        SYM(slist_free_all, "curl_slist_free_all");
        SYM(multi_init, "curl_multi_init");
        SYM(multi_cleanup, "curl_multi_cleanup");
        SYM(multi_add_handle, "curl_multi_add_handle");
        SYM(multi_remove_handle, "curl_multi_remove_handle");
        SYM(multi_perform, "curl_multi_perform");
        SYM(multi_poll, "curl_multi_poll");
        SYM(multi_info_read, "curl_multi_info_read");
        lc.global_init(CURL_GLOBAL_DEFAULT);
        srandom((unsigned)time(NULL));
        lc.loaded = true;
        return;
fail:
        snprintf(load_error, sizeof(load_error),
                 "the libcurl found lacks %s (heal needs libcurl >= 7.74)", missing);
        dlclose(h);
}

int libcurl_load(heal_error *err)
{
        pthread_once(&once, load);
        return lc.loaded ? 0 : heal_error_set(err, -ENOPKG, "%s", load_error);
}
