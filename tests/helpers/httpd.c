/* SPDX-License-Identifier: MIT */
#include "httpd.h"

#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static const char *reason(int status)
{
        switch (status) {
        case 200:
                return "OK";
        case 401:
                return "Unauthorized";
        case 429:
                return "Too Many Requests";
        case 500:
                return "Internal Server Error";
        case 503:
                return "Service Unavailable";
        default:
                return "Status";
        }
}

/* Read one request: headers, then Content-Length bytes of body. */
static void read_request(int c, char *buf, size_t len)
{
        size_t got = 0, want = 0;
        char *end;

        while (got < len - 1) {
                ssize_t n = read(c, buf + got, len - 1 - got);

                if (n <= 0)
                        break;
                got += (size_t)n;
                buf[got] = '\0';
                end = strstr(buf, "\r\n\r\n");
                if (end && !want) {
                        char *cl = strcasestr(buf, "content-length:");

                        want = (size_t)(end + 4 - buf) + (cl ? (size_t)atol(cl + 15) : 0);
                }
                if (want && got >= want)
                        break;
        }
        buf[got] = '\0';
}

static void answer(int c, const struct httpd_reply *r)
{
        size_t len = r->body ? strlen(r->body) : r->body_size;
        char head[1024];
        char *big = NULL;
        const char *body = r->body;
        int n;

        if (!body) {
                big = malloc(len + 1);
                memset(big, 'x', len);
                big[len] = '\0';
                body = big;
        }
        n = snprintf(head, sizeof(head),
                     "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%s"
                     "Connection: close\r\n\r\n",
                     r->status, reason(r->status),
                     r->content_type ? r->content_type : "application/json", len,
                     r->headers ? r->headers : "");
        if (send(c, head, (size_t)n, MSG_NOSIGNAL) == n)
                for (size_t off = 0; off < len;) {
                        ssize_t w = send(c, body + off, len - off, MSG_NOSIGNAL);

                        if (w <= 0)
                                break;
                        off += (size_t)w;
                }
        free(big);
}

static void *serve(void *arg)
{
        struct httpd *h = arg;

        while (h->served < h->n_replies) {
                const struct httpd_reply *r = &h->replies[h->served];
                char scratch[16384];
                int c = accept(h->fd, NULL, NULL);

                if (c < 0)
                        break;
                read_request(c, h->served < 8 ? h->requests[h->served] : scratch, sizeof(scratch));
                if (r->delay_ms)
                        nanosleep(&(struct timespec){ .tv_sec = r->delay_ms / 1000,
                                                      .tv_nsec = (long)(r->delay_ms % 1000) *
                                                                 1000000 },
                                  NULL);
                answer(c, r);
                h->served++;
                close(c);
        }
        return NULL;
}

void httpd_start(struct httpd *h, const struct httpd_reply *replies, size_t n)
{
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t alen = sizeof(a);

        memset(h, 0, sizeof(*h));
        h->replies = replies;
        h->n_replies = n;
        h->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        cr_assert(h->fd >= 0);
        cr_assert_eq(bind(h->fd, (struct sockaddr *)&a, sizeof(a)), 0);
        cr_assert_eq(listen(h->fd, 16), 0);
        cr_assert_eq(getsockname(h->fd, (struct sockaddr *)&a, &alen), 0);
        h->port = ntohs(a.sin_port);
        snprintf(h->base_url, sizeof(h->base_url), "http://127.0.0.1:%d/v1", h->port);
        cr_assert_eq(pthread_create(&h->thread, NULL, serve, h), 0);
}

void httpd_stop(struct httpd *h)
{
        shutdown(h->fd, SHUT_RDWR);
        pthread_join(h->thread, NULL);
        close(h->fd);
}
