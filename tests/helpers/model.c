/* SPDX-License-Identifier: MIT */
#include "model.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

void model_reply(struct model *m, size_t i, json_t *body)
{
        cr_assert_lt(i, MODEL_REPLIES);
        free(m->bodies[i]);
        m->bodies[i] = json_dumps(body, JSON_COMPACT);
        json_decref(body);
        cr_assert_not_null(m->bodies[i]);
        m->replies[i] = (struct httpd_reply){ .status = 200, .body = m->bodies[i] };
}

void model_run(struct model *m, struct test_proc *run, const char *cwd, const char *const *env,
               const char *subcmd, const char *provider, size_t n, const char *const *args)
{
        const char *argv[64] = { subcmd, "--model", provider, "--llm-url", NULL, "--no-cache" };
        size_t k = 6;

        httpd_start(&m->srv, m->replies, n);
        argv[4] = m->srv.base_url;
        for (size_t i = 0; args[i] && k < 63; i++)
                argv[k++] = args[i];
        argv[k] = NULL;
        test_heal(run, cwd, env, NULL, argv);
        httpd_stop(&m->srv);
}

const char *model_request_body(const struct model *m, size_t i)
{
        const char *b = i < 8 ? strstr(m->srv.requests[i], "\r\n\r\n") : NULL;

        cr_assert_not_null(b, "request %zu was not recorded", i);
        return b + 4;
}

void model_release(struct model *m)
{
        for (size_t i = 0; i < MODEL_REPLIES; i++)
                free(m->bodies[i]);
        memset(m, 0, sizeof(*m));
}
