/* SPDX-License-Identifier: MIT */
#ifndef HEAL_FUZZ_H
#define HEAL_FUZZ_H

/*
 * The libFuzzer entry points every fuzz/fuzz_<parser>.c defines, declared once so that
 * -Wmissing-prototypes stays quiet. Each target links either with libFuzzer (-Dfuzzing=true,
 * -fsanitize=fuzzer) or with fuzz/standalone_main.c, which replays files (meson test).
 */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* Invariant check: a violation is a finding, so stop at once (libFuzzer saves the input). */
#define FUZZ_ASSERT(cond)                \
 do {                                    \
  if (!(cond))                           \
   fuzz_fail(__FILE__, __LINE__, #cond); \
 } while (0)

static inline _Noreturn void fuzz_fail(const char *file, int line, const char *what)
{
        fprintf(stderr, "%s:%d: invariant violated: %s\n", file, line, what);
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#endif
