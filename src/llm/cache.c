/* SPDX-License-Identifier: MIT */
/*
 * The response cache: one file per canonical request under the cache directory
 * (DIR/ab/abcdef....json, the same key and response format as cassettes), so running heal again
 * on the same failure costs nothing. Written to a temporary file and renamed, so a reader never
 * sees half an answer; an unreadable or corrupted entry is a miss, never an error. Keys and
 * tokens are never in it (they are not part of the canonical request).
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/util.h"
#include "llm/llm-internal.h"

static int entry_path(char *path, size_t len, const char *dir, const heal_llm_request *req,
                      bool make_dir)
{
        _cleanup_free_ char *canonical = NULL;
        char key[33];

        if (cassette_key(&canonical, key, req, NULL) < 0)
                return -EINVAL;
        if (make_dir) {
                (void)mkdir(dir, 0700);
                if (str_printf(path, len, "%s/%.2s", dir, key) < 0 ||
                    (mkdir(path, 0700) < 0 && errno != EEXIST))
                        return -EIO;
        }
        return str_printf(path, len, "%s/%.2s/%s.json", dir, key, key);
}

int cache_get(const char *dir, const heal_llm_request *req, heal_llm_response *ret)
{
        heal_llm_response resp = { 0 };
        char path[PATH_MAX];
        json_t *o;

        if (entry_path(path, sizeof(path), dir, req, false) < 0)
                return -ENOENT;
        o = json_load_file(path, 0, NULL);
        if (!json_is_object(o) || cassette_response(&resp, o, NULL) < 0 || resp.n_choices == 0) {
                json_decref(o);
                heal_llm_response_release(&resp);
                return -ENOENT;
        }
        json_decref(o);
        snprintf(resp.request_id, sizeof(resp.request_id), "cache");
        *ret = resp;
        return 0;
}

void cache_put(const char *dir, const heal_llm_request *req, const heal_llm_response *resp)
{
        char path[PATH_MAX], tmp[PATH_MAX + 16];
        json_t *o;
        int fd;

        if (entry_path(path, sizeof(path), dir, req, true) < 0 ||
            str_printf(tmp, sizeof(tmp), "%s.XXXXXX", path) < 0)
                return;
        fd = mkstemp(tmp);
        if (fd < 0)
                return;
        o = cassette_response_json(resp);
        if (!o || json_dumpfd(o, fd, JSON_SORT_KEYS | JSON_COMPACT) < 0 || fsync(fd) < 0 ||
            close(fd) < 0 || rename(tmp, path) < 0) {
                unlink(tmp);
                if (fcntl(fd, F_GETFD) >= 0)
                        close(fd);
        }
        json_decref(o);
}
