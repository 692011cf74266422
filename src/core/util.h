/* SPDX-License-Identifier: MIT */
#ifndef HEAL_CORE_UTIL_H
#define HEAL_CORE_UTIL_H

/* What every module shares: scoped cleanup (systemd src/basic/alloc-util.h, bubblewrap utils.h). */

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#define _cleanup_(f)    __attribute__((cleanup(f)))
#define _cleanup_free_  _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)
#define _unused_        __attribute__((unused))
#define ELEMENTSOF(a)   (sizeof(a) / sizeof((a)[0]))
#define MIN(a, b)       ((a) < (b) ? (a) : (b))
#define MAX(a, b)       ((a) > (b) ? (a) : (b))

static inline void freep(void *p)
{
        free(*(void **)p);
}

static inline void closep(int *fd)
{
        if (*fd >= 0) {
                int saved = errno;
                close(*fd);
                errno = saved;
        }
}

/* Hand a pointer or fd on: the cleanup of the old variable then does nothing. */
#define TAKE_PTR(p) \
 ({ \
__typeof__(p) _p = (p); \
(p) = NULL; \
_p; \
 })
#define TAKE_FD(fd) \
 (                  \
         {          \
int _fd = (fd);         \
(fd) = -1;              \
_fd;                    \
         })

#define DEFINE_CLEANUP_FUNC(type, func) \
 static inline void func##p(type **p)   \
 {                                      \
  if (*p)                               \
   func(*p);                            \
 }

/* Close @fd if it is open and return -1, for "fd = safe_close(fd);". */
static inline int safe_close(int fd)
{
        if (fd >= 0) {
                int saved = errno;
                close(fd);
                errno = saved;
        }
        return -1;
}

/* snprintf(3) into a fixed buffer that reports truncation: 0, or -ENAMETOOLONG when cut. */
int str_printf(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* A memfd named @name holding @len bytes of @data, at offset 0 (a child's stdin): the fd
 * (O_CLOEXEC), or -errno from memfd_create(2) or write(2). */
int memfd_with_data(const char *name, const void *data, size_t len);

#endif
