/* SPDX-License-Identifier: MIT */
/* The limits of a program's stages, as every command that runs one takes them (heal exec, gen,
 * ask, mcp): --timeout, --cpu-time, --memory, --output-limit for the run stage, and
 * --compile-timeout, --compile-memory, --compile-output-limit for the build. */
#include <errno.h>
#include <string.h>

#include "cli/cli.h"
#include "core/parse.h"

static int bad(const char *cmd, const char *name, const char *v, const char *expected)
{
        fprintf(stderr, "%s: %s '%s': expected %s\nsee '%s --help'\n", cmd, name, v, expected, cmd);
        return -EINVAL;
}

static int set_time(uint64_t *field, const char *cmd, const char *name, const char *v)
{
        if (parse_duration_ms(v, field) < 0 || *field == 0)
                return bad(cmd, name, v, "a time like 500ms, 5s, 2m");
        return 0;
}

static int set_size(uint64_t *field, const char *cmd, const char *name, const char *v)
{
        if (parse_size(v, field) < 0 || *field == 0)
                return bad(cmd, name, v, "a size like 512K, 64M, 1G");
        return 0;
}

int limit_opt(heal_runner_limits *run, heal_runner_limits *compile, const char *cmd,
              const char *name, const char *v)
{
        if (strcmp(name, "--timeout") == 0)
                return set_time(&run->wall_ms, cmd, name, v);
        if (strcmp(name, "--cpu-time") == 0)
                return set_time(&run->cpu_ms, cmd, name, v);
        if (strcmp(name, "--memory") == 0)
                return set_size(&run->mem_max_bytes, cmd, name, v);
        if (strcmp(name, "--output-limit") == 0)
                return set_size(&run->out_max_bytes, cmd, name, v);
        if (!compile)
                return 1;
        if (strcmp(name, "--compile-timeout") == 0)
                return set_time(&compile->wall_ms, cmd, name, v);
        if (strcmp(name, "--compile-memory") == 0)
                return set_size(&compile->mem_max_bytes, cmd, name, v);
        if (strcmp(name, "--compile-output-limit") == 0)
                return set_size(&compile->out_max_bytes, cmd, name, v);
        return 1;
}
