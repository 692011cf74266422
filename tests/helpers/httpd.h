/* SPDX-License-Identifier: MIT */
#ifndef HEAL_TEST_HTTPD_H
#define HEAL_TEST_HTTPD_H

/* A small HTTP/1.1 server on 127.0.0.1 for the LLM tests: it answers each connection, in a
 * thread of its own, with the next scripted reply (status, headers, body, delay) in the order
 * the connections came, records every request it read, and how many were in flight at once. */

#include <pthread.h>
#include <stddef.h>

struct httpd_reply {
        int status;
        const char *content_type; /* NULL: application/json */
        const char *headers;      /* extra header lines, each ending in \r\n, or NULL */
        const char *body;         /* NULL with @body_size: that many 'x' bytes */
        size_t body_size;
        unsigned delay_ms; /* before answering */
        unsigned gather;   /* first wait (up to 10 s) until this many requests are in flight */
};

struct httpd {
        int fd;
        int port;
        pthread_t thread;
        const struct httpd_reply *replies;
        size_t n_replies;
        size_t served;   /* replies sent */
        size_t accepted; /* connections taken */
        unsigned inflight, max_inflight;
        pthread_mutex_t lock;
        pthread_cond_t changed;
        pthread_t conns[64];
        char requests[8][16384]; /* head and body of the first 8 requests */
        char base_url[64];
};

void httpd_start(struct httpd *h, const struct httpd_reply *replies, size_t n);
void httpd_stop(struct httpd *h);

#endif
