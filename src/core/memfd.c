/* SPDX-License-Identifier: MIT */
/* Bytes as a file descriptor: what a child reads as its stdin. */
#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/util.h"

int memfd_with_data(const char *name, const void *data, size_t len)
{
        const char *p = data;
        size_t off = 0;
        int fd = memfd_create(name, MFD_CLOEXEC);

        if (fd < 0)
                return -errno;
        while (off < len) {
                ssize_t n = write(fd, p + off, len - off);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0) {
                        int r = n < 0 ? -errno : -EIO;

                        close(fd);
                        return r;
                }
                off += (size_t)n;
        }
        if (lseek(fd, 0, SEEK_SET) < 0) {
                int r = -errno;

                close(fd);
                return r;
        }
        return fd;
}
