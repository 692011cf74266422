/* SPDX-License-Identifier: MIT */
/* JSON on stdout: the documents themselves come from src/runner/result_json.c and each
 * command's own report. */
#include <stdio.h>

#include "cli/cli.h"

int json_print(json_t *doc)
{
        int r;

        if (!doc) {
                log_error("out of memory while formatting JSON");
                return -1;
        }
        r = json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_ENSURE_ASCII);
        if (fputc('\n', stdout) == EOF || fflush(stdout) == EOF || ferror(stdout))
                r = -1;
        json_decref(doc);
        /* A document nobody can read is no result: say so, the caller exits non-zero. */
        if (r < 0)
                log_error("cannot write the JSON result to stdout: %m");
        return r;
}
