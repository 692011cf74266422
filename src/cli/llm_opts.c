/* SPDX-License-Identifier: MIT */
/* The model flags every command that talks to a model takes: --model, --llm-url, --record. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "core/parse.h"

extern char **environ;

int llm_opts_parse(struct llm_opts *o, int argc, char **argv, int *i)
{
        static const char *const names[] = { "--model", "--llm-url", "--record", "--llm-timeout" };
        const char **slots[] = { &o->model, &o->url, &o->record, &o->timeout };

        for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
                size_t n = strlen(names[k]);

                if (strncmp(argv[*i], names[k], n) != 0)
                        continue;
                if (argv[*i][n] == '=') {
                        *slots[k] = argv[*i] + n + 1;
                        return 1;
                }
                if (argv[*i][n] != '\0')
                        continue;
                if (*i + 1 >= argc) {
                        log_error("%s needs a value", names[k]);
                        return -1;
                }
                *slots[k] = argv[++*i];
                return 1;
        }
        return 0;
}

/* .heal/config in the working directory or the nearest directory above it that has one. */
static const char *find_config(char *buf, size_t len)
{
        char dir[PATH_MAX];

        if (!getcwd(dir, sizeof(dir)))
                return NULL;
        for (;;) {
                char *slash = strrchr(dir, '/');

                if (snprintf(buf, len, "%s/.heal/config", strcmp(dir, "/") ? dir : "") < (int)len &&
                    access(buf, F_OK) == 0)
                        return buf;
                if (!slash || strcmp(dir, "/") == 0)
                        return NULL;
                slash[slash == dir] = '\0'; /* "/a/b" -> "/a", "/a" -> "/" */
        }
}

int llm_opts_select(const struct llm_opts *o, heal_llm_selection *sel, uint64_t timeout_ms,
                    heal_error *err)
{
        char config[PATH_MAX + 16];
        uint64_t t = timeout_ms;
        int r;

        if (o->timeout && (parse_duration_ms(o->timeout, &t) < 0 || t == 0))
                return heal_error_set(err, -EINVAL,
                                      "--llm-timeout '%s': expected a time like 30s or 2m",
                                      o->timeout);
        r = heal_llm_select(sel, o->model, o->url, (const char *const *)environ,
                            find_config(config, sizeof(config)), err);
        if (r == 0 && o->record && strcmp(sel->config.provider, "replay") == 0) {
                heal_llm_selection_release(sel);
                return heal_error_set(err, -EINVAL,
                                      "--record writes down a live provider's answers, and "
                                      "replay:%s answers from a cassette already; record with "
                                      "the provider you mean to replay",
                                      sel->model);
        }
        if (r == 0 && o->record)
                sel->config.cassette = o->record;
        if (r == 0 && t)
                sel->config.timeout_ms = t;
        return r;
}

/* $XDG_CACHE_HOME/heal/llm, else ~/.cache/heal/llm, created; false when neither works. */
bool llm_cache_dir(char *out, size_t len)
{
        const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
        char *p;

        if (xdg && xdg[0] == '/')
                snprintf(out, len, "%s/heal/llm", xdg);
        else if (home && home[0] == '/')
                snprintf(out, len, "%s/.cache/heal/llm", home);
        else
                return false;
        for (p = out + 1; (p = strchr(p, '/')); p++) {
                *p = '\0';
                mkdir(out, 0700);
                *p = '/';
        }
        return mkdir(out, 0700) == 0 || errno == EEXIST;
}
