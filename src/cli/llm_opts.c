/* SPDX-License-Identifier: MIT */
/* The model flags every command that talks to a model takes: --model, --llm-url, --record. */
#include <errno.h>
#include <string.h>

#include "cli/cli.h"

extern char **environ;

int llm_opts_parse(struct llm_opts *o, int argc, char **argv, int *i)
{
        static const char *const names[] = { "--model", "--llm-url", "--record" };
        const char **slots[] = { &o->model, &o->url, &o->record };

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

int llm_opts_select(const struct llm_opts *o, heal_llm_selection *sel, heal_error *err)
{
        int r = heal_llm_select(sel, o->model, o->url, (const char *const *)environ, ".heal/config",
                                err);

        if (r == 0 && o->record && strcmp(sel->config.provider, "replay") == 0) {
                heal_llm_selection_release(sel);
                return heal_error_set(err, -EINVAL,
                                      "--record needs a live provider, not replay (it would "
                                      "record the cassette into itself)");
        }
        if (r == 0 && o->record)
                sel->config.cassette = o->record;
        return r;
}
