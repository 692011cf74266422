/* SPDX-License-Identifier: MIT */
#ifndef HEAL_TEST_MODEL_H
#define HEAL_TEST_MODEL_H

/* A scripted model for the heal gen and heal ask tests: JSON answers served in order on
 * 127.0.0.1 (httpd.c), heal run against it, and the requests it made. */

#include <jansson.h>
#include <stddef.h>

#include "harness.h"
#include "httpd.h"

#define MODEL_REPLIES 8

struct model {
        struct httpd srv;
        struct httpd_reply replies[MODEL_REPLIES];
        char *bodies[MODEL_REPLIES];
};

/* Answer @i: a 200 with @body as JSON (stolen). */
void model_reply(struct model *m, size_t i, json_t *body);

/* heal @subcmd --model @provider --llm-url <the server> --no-cache @args, with @env
 * (test_heal()), while the server holds @n answers. */
void model_run(struct model *m, struct test_proc *run, const char *cwd, const char *const *env,
               const char *subcmd, const char *provider, size_t n, const char *const *args);

/* The body of request @i (asserts it was recorded). */
const char *model_request_body(const struct model *m, size_t i);

void model_release(struct model *m);

#endif
