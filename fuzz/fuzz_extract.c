/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target for heal_gen_extract(), the code extractor of heal gen: a model's answer is
 * untrusted text of any shape.
 *
 * Input: the first byte picks the language (go, c, python3, sh, bash), the rest is the answer
 * (not NUL-terminated). Checks, besides "no crash, no sanitizer report":
 *   - the result is 0 or -ENOMSG (with a message), nothing else;
 *   - on success the code is NUL-terminated at its length, no longer than the answer, holds no
 *     CRLF line end, its block is within the blocks counted, and it came from a fence exactly
 *     when the answer had one;
 *   - the interpreters' code is always "complete";
 *   - the same answer gives the same code.
 */
#include <errno.h>
#include <string.h>

#include "heal/gen.h"

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static const char *const langs[] = { "go", "c", "python3", "sh", "bash" };
        heal_gen_code a = { 0 }, b = { 0 };
        heal_error err = HEAL_ERROR_INIT;
        const char *lang, *text;
        int r;

        if (size < 1)
                return 0;
        lang = langs[data[0] % 5];
        text = (const char *)data + 1;
        r = heal_gen_extract(&a, text, size - 1, lang, &err);
        FUZZ_ASSERT(r == 0 || r == -ENOMSG);
        if (r < 0) {
                FUZZ_ASSERT(err.msg[0] != '\0');
                return 0;
        }
        FUZZ_ASSERT(a.code && a.code[a.len] == '\0' && a.len <= size - 1);
        FUZZ_ASSERT(!memmem(a.code, a.len, "\r\n", 2));
        FUZZ_ASSERT(a.block <= a.n_blocks);
        FUZZ_ASSERT((a.block == 0) == (a.n_blocks == 0));
        if (strcmp(lang, "go") && strcmp(lang, "c"))
                FUZZ_ASSERT(a.complete);
        FUZZ_ASSERT(heal_gen_extract(&b, text, size - 1, lang, NULL) == 0);
        FUZZ_ASSERT(b.len == a.len && memcmp(a.code, b.code, a.len) == 0 && b.block == a.block);
        heal_gen_code_release(&a);
        heal_gen_code_release(&b);
        return 0;
}
