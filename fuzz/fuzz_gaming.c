/* SPDX-License-Identifier: MIT */
/*
 * The gaming rules on arbitrary file versions: the input's two halves are a file's old and new
 * content (Go or C by the input's first byte), checked against a baseline whose failure is at
 * line 3 of the file, in function F: no crash, no leak, only the documented errors; every hit
 * names a known rule and its verdict fits the report.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "heal/gaming.h"

#include "fuzz.h"

static char *copy(const uint8_t *data, size_t len)
{
        char *s = malloc(len + 1);

        if (s) {
                memcpy(s, data, len);
                s[len] = '\0';
        }
        return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char go[] = "a.go", c[] = "a.c", fn[] = "F", main_fn[] = "main.F";
        heal_frame frame = { main_fn, go, 3, true };
        heal_diag d = { .kind = HEAL_DIAG_PANIC,
                        .severity = HEAL_SEVERITY_ERROR,
                        .file = go,
                        .line = 3,
                        .function = fn,
                        .frames = &frame,
                        .n_frames = 1 };
        heal_analysis base = { .diags = &d, .n_diags = 1 };
        heal_gaming_opts o = { .baseline = &base };
        heal_error err = HEAL_ERROR_INIT;
        heal_gaming_report rep;
        size_t half = size / 2;
        heal_file_change f = { size && data[0] & 1 ? c : go, copy(data, half),
                               copy(data + half, size - half) };
        heal_patch p = { &f, 1 };
        int r;

        if (f.file == c)
                d.file = frame.file = c;
        FUZZ_ASSERT(f.before && f.after);
        r = heal_gaming_check(&rep, &p, &o, &err);
        FUZZ_ASSERT(r == 0 || r == -ENOMEM);
        if (r == 0) {
                bool reject = false;

                for (size_t i = 0; i < rep.n; i++) {
                        FUZZ_ASSERT(heal_gaming_rule_find(rep.v[i].rule) && rep.v[i].detail);
                        FUZZ_ASSERT(rep.v[i].penalty > 0 && rep.v[i].penalty <= 1);
                        reject |= rep.v[i].reject;
                }
                FUZZ_ASSERT(reject == rep.reject && rep.penalty <= 1);
                heal_gaming_report_release(&rep);
        }
        free(f.before);
        free(f.after);
        return 0;
}
