/* SPDX-License-Identifier: MIT */
#ifndef HEAL_TEST_HTTPD_H
#define HEAL_TEST_HTTPD_H

/* A small HTTP/1.1 server on 127.0.0.1 for the LLM tests: it answers each connection with the
 * next scripted reply (status, headers, body, delay) and records every request it read. */

#include <pthread.h>
#include <stddef.h>

struct httpd_reply {
        int status;
        const char *content_type; /* NULL: application/json */
        const char *headers;      /* extra header lines, each ending in \r\n, or NULL */
        const char *body;         /* NULL with @body_size: that many 'x' bytes */
        size_t body_size;
        unsigned delay_ms; /* before answering */
};

struct httpd {
        int fd;
        int port;
        pthread_t thread;
        const struct httpd_reply *replies;
        size_t n_replies;
        size_t served;
        char requests[8][16384]; /* head and body of the first 8 requests */
        char base_url[64];
};

void httpd_start(struct httpd *h, const struct httpd_reply *replies, size_t n);
void httpd_stop(struct httpd *h);

#endif
