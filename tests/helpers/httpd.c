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
        case 529:
                return "Overloaded";
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

struct conn {
        struct httpd *h;
        int fd;
        size_t index;
};

/* Wait until @want requests are in flight, or 10 s. */
static void gather(struct httpd *h, unsigned want)
{
        struct timespec until;

        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += 10;
        pthread_mutex_lock(&h->lock);
        while (h->inflight < want && pthread_cond_timedwait(&h->changed, &h->lock, &until) == 0)
                ;
        pthread_mutex_unlock(&h->lock);
}

static void *serve_one(void *arg)
{
        struct conn *c = arg;
        struct httpd *h = c->h;
        const struct httpd_reply *r = &h->replies[c->index];
        static __thread char scratch[16384];

        read_request(c->fd, c->index < 8 ? h->requests[c->index] : scratch, sizeof(scratch));
        pthread_mutex_lock(&h->lock);
        h->inflight++;
        if (h->inflight > h->max_inflight)
                h->max_inflight = h->inflight;
        pthread_cond_broadcast(&h->changed);
        pthread_mutex_unlock(&h->lock);
        if (r->gather)
                gather(h, r->gather);
        if (r->delay_ms)
                nanosleep(&(struct timespec){ .tv_sec = r->delay_ms / 1000,
                                              .tv_nsec = (long)(r->delay_ms % 1000) * 1000000 },
                          NULL);
        answer(c->fd, r);
        close(c->fd);
        pthread_mutex_lock(&h->lock);
        h->inflight--;
        h->served++;
        pthread_cond_broadcast(&h->changed);
        pthread_mutex_unlock(&h->lock);
        free(c);
        return NULL;
}

static void *serve(void *arg)
{
        struct httpd *h = arg;

        while (h->accepted < h->n_replies && h->accepted < 64) {
                struct conn *c;
                int fd = accept(h->fd, NULL, NULL);

                if (fd < 0)
                        break;
                c = malloc(sizeof(*c));
                *c = (struct conn){ h, fd, h->accepted };
                if (pthread_create(&h->conns[h->accepted], NULL, serve_one, c) != 0) {
                        close(fd);
                        free(c);
                        break;
                }
                h->accepted++;
        }
        return NULL;
}

void httpd_start(struct httpd *h, const struct httpd_reply *replies, size_t n)
{
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t alen = sizeof(a);

        memset(h, 0, sizeof(*h));
        pthread_mutex_init(&h->lock, NULL);
        pthread_cond_init(&h->changed, NULL);
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
        for (size_t i = 0; i < h->accepted; i++)
                pthread_join(h->conns[i], NULL);
        close(h->fd);
        pthread_mutex_destroy(&h->lock);
        pthread_cond_destroy(&h->changed);
}
