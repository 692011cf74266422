/* SPDX-License-Identifier: MIT */
/*
 * Failure analysis on arbitrary output (every parser, both fingerprints): no crash, no leak,
 * only the documented errors; every diagnostic has a message and its strings are readable;
 * analysing the same bytes twice gives the same fingerprints and the same prompt. The first byte
 * picks the exit status and the command line (go test, go vet, go run, make, python3).
 */
#include <errno.h>
#include <string.h>

#include "heal/analyze.h"
#include "heal/prompt.h"

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static const char *const commands[] = { "go test ./...", "go vet ./...", "go run .",
                                                "make",          "python3 x.py", NULL };
        static const int codes[] = { 0, 1, 2, 134, 139 };
        heal_analyze_opts o = { 0 };
        heal_error err = HEAL_ERROR_INIT;
        heal_analysis a, b;
        int r;

        if (size < 1)
                return 0;
        o.command = commands[data[0] % 6];
        o.exit_code = codes[(data[0] / 6) % 5];
        data++, size--;
        r = heal_analyze(&a, (const char *)data, size, &o, &err);
        FUZZ_ASSERT(r == 0 || r == -ENOMEM);
        if (r < 0)
                return 0;
        for (size_t i = 0; i < a.n_diags; i++) {
                const heal_diag *d = &a.diags[i];

                FUZZ_ASSERT(d->message != NULL && strlen(d->message) < (1u << 20));
                FUZZ_ASSERT(d->n_frames <= 64 && d->n_notes <= 16);
                for (size_t k = 0; k < d->n_frames; k++)
                        FUZZ_ASSERT(d->frames[k].function != NULL);
        }
        FUZZ_ASSERT(strlen(a.exact) == 32 && strlen(a.cause) == 32 && a.tail);
        FUZZ_ASSERT(o.exit_code == 0 || a.n_diags > 0);
        r = heal_analyze(&b, (const char *)data, size, &o, &err);
        FUZZ_ASSERT(r == 0);
        FUZZ_ASSERT(strcmp(a.exact, b.exact) == 0 && strcmp(a.cause, b.cause) == 0);
        {
                heal_prompt_opts po = { .command = o.command ? o.command : "cmd",
                                        .exit_code = o.exit_code,
                                        .tree = "/src" };
                heal_prompt p1, p2;

                FUZZ_ASSERT(heal_prompt_build(&p1, &a, NULL, &po, &err) == 0);
                FUZZ_ASSERT(heal_prompt_build(&p2, &b, NULL, &po, &err) == 0);
                FUZZ_ASSERT(strcmp(p1.user, p2.user) == 0 && p1.tokens == p2.tokens);
                heal_prompt_release(&p1);
                heal_prompt_release(&p2);
        }
        heal_analysis_release(&a);
        heal_analysis_release(&b);
        return 0;
}
