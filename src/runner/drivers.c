/* SPDX-License-Identifier: MIT */
/*
 * The language drivers: one row per language. To add one, add a row (name, extensions, the
 * compile and run argv, default limits) and, if the toolchain needs a file the code does not
 * bring, a prepare function. Limits: compile stages get a minute and 2 GiB (a cold Go build of
 * a program that imports net/http takes ~20 s here), run stages 10 s and 512 MiB, both 1 MiB of
 * output (MCP clients cap a message at 10 MiB; Piston keeps 1 KiB per stream by default).
 */
#include <errno.h>
#include <string.h>

#include "core/util.h"
#include "runner/runner-internal.h"

#define COMPILE_LIMITS                                                                     \
 {                                                                                         \
  .wall_ms = 60000, .cpu_ms = 0, .mem_max_bytes = 2ULL << 30, .out_max_bytes = 1ULL << 20, \
 }
#define RUN_LIMITS                                                                           \
 {                                                                                           \
  .wall_ms = 10000, .cpu_ms = 0, .mem_max_bytes = 512ULL << 20, .out_max_bytes = 1ULL << 20, \
 }

/* Go builds with -trimpath: the build cache then serves the same code built in another
 * directory (every exec has a new one; without it each build compiles the program again),
 * and stack traces name main/main.go rather than a temporary path. */

/* A module for code that brings none: the language version is the oldest Go heal supports,
 * so that newer toolchains build it too (GOTOOLCHAIN=local keeps them from downloading). */
static int go_prepare(int dirfd, const heal_runner_opts *o, heal_error *err)
{
        static const char gomod[] = "module main\n\ngo 1.19\n";

        (void)o;
        if (files_exists(dirfd, "go.mod"))
                return 0;
        return files_write_one(dirfd, "go.mod", gomod, sizeof(gomod) - 1, err);
}

static const struct runner_driver drivers[] = {
        {
                .name = "go",
                .aliases = { "golang" },
                .exts = { ".go" },
                .main_file = "main.go",
                .src_ext = ".go",
                .compile = { "go", "build", "-trimpath", "-ldflags=-s -w", "-o", "prog", "." },
                .run = { "./prog" },
                .compile_limits = COMPILE_LIMITS,
                .run_limits = RUN_LIMITS,
                .prepare = go_prepare,
        },
        {
                .name = "c",
                .exts = { ".c" },
                .main_file = "main.c",
                .src_ext = ".c",
                .compile = { "cc", "-O2", "-Wall", "-o", "prog", "@sources", "-lm" },
                .run = { "./prog" },
                .compile_limits = COMPILE_LIMITS,
                .run_limits = RUN_LIMITS,
        },
        {
                .name = "python3",
                .aliases = { "python", "py" },
                .exts = { ".py" },
                .main_file = "main.py",
                .run = { "python3", "@main" },
                .run_limits = RUN_LIMITS,
        },
        {
                .name = "sh",
                .exts = { ".sh" },
                .main_file = "main.sh",
                .run = { "sh", "@main" },
                .run_limits = RUN_LIMITS,
        },
        {
                .name = "bash",
                .exts = { ".bash" },
                .main_file = "main.bash",
                .run = { "bash", "@main" },
                .run_limits = RUN_LIMITS,
        },
};

const struct runner_driver *driver_find(const char *name)
{
        if (!name)
                return NULL;
        for (size_t i = 0; i < ELEMENTSOF(drivers); i++) {
                if (strcmp(drivers[i].name, name) == 0)
                        return &drivers[i];
                for (size_t k = 0; k < ELEMENTSOF(drivers[i].aliases) && drivers[i].aliases[k]; k++)
                        if (strcmp(drivers[i].aliases[k], name) == 0)
                                return &drivers[i];
        }
        return NULL;
}

const struct runner_driver *driver_for_file(const char *path)
{
        const char *base = path ? strrchr(path, '/') : NULL, *dot;

        base = base ? base + 1 : path;
        if (!base || !(dot = strrchr(base, '.')) || dot == base)
                return NULL;
        for (size_t i = 0; i < ELEMENTSOF(drivers); i++)
                for (size_t k = 0; k < ELEMENTSOF(drivers[i].exts) && drivers[i].exts[k]; k++)
                        if (strcmp(drivers[i].exts[k], dot) == 0)
                                return &drivers[i];
        return NULL;
}

const char *heal_runner_lang_canonical(const char *name)
{
        const struct runner_driver *d = driver_find(name);

        return d ? d->name : NULL;
}

const char *heal_runner_lang_for_file(const char *path)
{
        const struct runner_driver *d = driver_for_file(path);

        return d ? d->name : NULL;
}

const char *heal_runner_lang_main_file(const char *name)
{
        const struct runner_driver *d = driver_find(name);

        return d ? d->main_file : NULL;
}

bool heal_runner_lang_is_compiled(const char *name)
{
        const struct runner_driver *d = driver_find(name);

        return d && d->compile[0];
}

int heal_runner_lang_limits(const char *name, heal_runner_limits *ret_compile,
                            heal_runner_limits *ret_run)
{
        const struct runner_driver *d = driver_find(name);

        if (!d)
                return -EINVAL;
        if (ret_compile)
                *ret_compile = d->compile_limits;
        if (ret_run)
                *ret_run = d->run_limits;
        return 0;
}

const char *heal_runner_langs(void)
{
        return "go, c, python3, sh, bash";
}
