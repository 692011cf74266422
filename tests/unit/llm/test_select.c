/* SPDX-License-Identifier: MIT */
/* Choosing the model: flags, environment, .heal/config, implied providers, and the errors. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "heal/llm.h"

static heal_llm_selection sel;
static heal_error err;

static int pick(const char *flag, const char *url, const char *const *env, const char *config)
{
        err = (heal_error)HEAL_ERROR_INIT;
        memset(&sel, 0, sizeof(sel));
        return heal_llm_select(&sel, flag, url, env, config, &err);
}

#define ENV(...) ((const char *const[]){ __VA_ARGS__, NULL })

Test(select, nothing_configured_says_how)
{
        cr_assert_eq(pick(NULL, NULL, ENV("PATH=/bin"), NULL), -ENOENT);
        cr_assert(strstr(err.msg, "HEAL_MODEL=openai:gpt-4.1-mini") && strstr(err.msg, "--model"),
                  "%s", err.msg);
}

Test(select, an_api_key_implies_its_provider)
{
        cr_assert_eq(pick(NULL, NULL, ENV("OPENAI_API_KEY=sk-x"), NULL), 0, "%s", err.msg);
        cr_assert_str_eq(sel.provider, "openai");
        cr_assert_str_eq(sel.model, "gpt-4.1-mini");
        cr_assert_str_eq(sel.source, "OPENAI_API_KEY");
        cr_assert_str_eq(sel.key_from, "OPENAI_API_KEY");
        cr_assert_str_eq(sel.config.base_url, "https://api.openai.com/v1");
        cr_assert_str_eq(sel.config.api_key, "sk-x");
        cr_assert_eq(sel.config.base_url, sel.base_url, "config points into the selection");
        heal_llm_selection_release(&sel);
        cr_assert_eq(sel.api_key[0], '\0', "release wipes the key");
}

Test(select, flag_beats_environment_beats_config)
{
        char path[] = "/tmp/heal-test-config-XXXXXX";
        int fd = mkstemp(path);
        FILE *f = fdopen(fd, "w");

        fputs("[llm]\nmodel = gemini:gemini-2.5-pro\n", f);
        fclose(f);
        cr_assert_eq(pick(NULL, NULL, ENV("GEMINI_API_KEY=g"), path), 0, "%s", err.msg);
        cr_assert_str_eq(sel.source, ".heal/config");
        cr_assert_str_eq(sel.model, "gemini-2.5-pro");
        cr_assert(strstr(sel.config.base_url, "generativelanguage.googleapis.com"));
        cr_assert_eq(pick(NULL, NULL,
                          ENV("GEMINI_API_KEY=g", "OPENROUTER_API_KEY=o",
                              "HEAL_MODEL=openrouter:anthropic/claude-3.7-sonnet"),
                          path),
                     0, "%s", err.msg);
        cr_assert_str_eq(sel.source, "HEAL_MODEL");
        cr_assert_str_eq(sel.provider, "openrouter");
        cr_assert_str_eq(sel.model, "anthropic/claude-3.7-sonnet");
        cr_assert_str_eq(sel.config.base_url, "https://openrouter.ai/api/v1");
        cr_assert_eq(pick("openai:gpt-4o", "http://127.0.0.1:9/v1",
                          ENV("HEAL_MODEL=gemini:x", "GEMINI_API_KEY=g"), path),
                     0, "%s", err.msg);
        cr_assert_str_eq(sel.source, "--model");
        cr_assert_str_eq(sel.config.base_url, "http://127.0.0.1:9/v1");
        cr_assert_null(sel.config.api_key, "a local URL needs no key");
        unlink(path);
}

Test(select, local_servers)
{
        cr_assert_eq(pick("ollama:qwen2.5-coder:7b", NULL, ENV("OLLAMA_HOST=box:11434"), NULL), 0,
                     "%s", err.msg);
        cr_assert_str_eq(sel.model, "qwen2.5-coder:7b", "only the first ':' separates");
        cr_assert_str_eq(sel.config.base_url, "http://box:11434/v1");
        cr_assert_eq(
                pick("openai:local", NULL, ENV("OPENAI_BASE_URL=http://localhost:8080/v1"), NULL),
                0, "%s", err.msg);
        cr_assert_str_eq(sel.config.base_url, "http://localhost:8080/v1");
}

Test(select, errors_name_the_problem)
{
        cr_assert_eq(pick("openai:gpt-4.1", NULL, ENV("PATH=/bin"), NULL), -EINVAL);
        cr_assert(strstr(err.msg, "needs an API key: set OPENAI_API_KEY"), "%s", err.msg);
        cr_assert_eq(pick("gpt-4", NULL, NULL, NULL), -EINVAL);
        cr_assert(strstr(err.msg, "names no provider"), "%s", err.msg);
        cr_assert_eq(pick("skynet:t800", NULL, NULL, NULL), -EINVAL);
        cr_assert(strstr(err.msg, "unknown provider 'skynet'"), "%s", err.msg);
        cr_assert_eq(pick("anthropic:claude-sonnet-4-5", NULL, NULL, NULL), -EINVAL);
        cr_assert(strstr(err.msg, "set ANTHROPIC_API_KEY"), "%s", err.msg);
        cr_assert_eq(pick("exec:local", NULL, NULL, NULL), -EINVAL);
        cr_assert(strstr(err.msg, "HEAL_LLM_COMMAND"), "%s", err.msg);
        cr_assert_eq(pick("replay:gpt-4.1-mini", NULL, NULL, NULL), -EINVAL);
        cr_assert(strstr(err.msg, "HEAL_CASSETTE"), "%s", err.msg);
        cr_assert_eq(pick("replay:gpt-4.1-mini", NULL, ENV("HEAL_CASSETTE=/tmp/c.jsonl"), NULL), 0);
        cr_assert_str_eq(sel.config.provider, "replay");
        cr_assert_str_eq(sel.config.cassette, "/tmp/c.jsonl");
}

Test(select, anthropic_and_exec)
{
        char path[] = "/tmp/heal-test-config-XXXXXX";
        int fd = mkstemp(path);
        FILE *f = fdopen(fd, "w");

        cr_assert_eq(pick(NULL, NULL, ENV("ANTHROPIC_API_KEY=sk-ant"), NULL), 0, "%s", err.msg);
        cr_assert_str_eq(sel.provider, "anthropic");
        cr_assert_str_eq(sel.config.provider, "anthropic");
        cr_assert_str_eq(sel.model, "claude-sonnet-4-5");
        cr_assert_str_eq(sel.config.base_url, "https://api.anthropic.com/v1");
        cr_assert_str_eq(sel.config.api_key, "sk-ant");
        cr_assert_eq(pick("exec:my-model", NULL, ENV("HEAL_LLM_COMMAND=llm -m x"), NULL), 0, "%s",
                     err.msg);
        cr_assert_str_eq(sel.config.provider, "exec");
        cr_assert_str_eq(sel.config.command, "llm -m x");
        cr_assert_str_eq(sel.model, "my-model");
        cr_assert_eq(sel.config.command, sel.command, "config points into the selection");
        /* a project's file may not choose a command: a cloned repository could run anything */
        fputs("[llm]\nmodel = exec:m\ncommand = ./answer.sh --fast\n", f);
        fclose(f);
        cr_assert_eq(pick(NULL, NULL, NULL, path), -EPERM);
        cr_assert(strstr(err.msg, "HEAL_LLM_COMMAND"), "%s", err.msg);
        cr_assert_eq(pick(NULL, NULL, ENV("HEAL_LLM_COMMAND=llm -m y"), path), 0, "%s", err.msg);
        cr_assert_str_eq(sel.config.command, "llm -m y", "the environment's command is used");
        unlink(path);
}

Test(select, a_project_config_cannot_send_the_key_elsewhere)
{
        char path[] = "/tmp/heal-test-config-XXXXXX";
        int fd = mkstemp(path);
        FILE *f = fdopen(fd, "w");

        fputs("[llm]\nurl = http://203.0.113.7/v1\n", f);
        fclose(f);
        cr_assert_eq(pick("openai:gpt-4.1-mini", NULL, ENV("OPENAI_API_KEY=sk-secret"), path),
                     -EPERM);
        cr_assert(strstr(err.msg, "--llm-url") && !strstr(err.msg, "sk-secret"), "%s", err.msg);
        /* without a key (a local server) the project may say where it is */
        cr_assert_eq(pick("openai:qwen", NULL, NULL, path), 0, "%s", err.msg);
        cr_assert_str_eq(sel.config.base_url, "http://203.0.113.7/v1");
        /* the flag is the user's own choice */
        cr_assert_eq(pick("openai:gpt-4.1-mini", "http://127.0.0.1:9/v1",
                          ENV("OPENAI_API_KEY=sk-secret"), path),
                     0, "%s", err.msg);
        /* a file others may write is not read at all */
        cr_assert_eq(chmod(path, 0666), 0);
        cr_assert_eq(pick("openai:qwen", NULL, NULL, path), -EPERM);
        cr_assert(strstr(err.msg, "writable by others"), "%s", err.msg);
        unlink(path);
}

Test(select, malformed_config)
{
        char path[] = "/tmp/heal-test-config-XXXXXX";
        int fd = mkstemp(path);
        FILE *f = fdopen(fd, "w");

        fputs("[llm\nmodel openai\n", f);
        fclose(f);
        cr_assert_eq(pick(NULL, NULL, NULL, path), -EBADMSG);
        cr_assert(strstr(err.msg, "line 1"), "%s", err.msg);
        cr_assert_eq(pick(NULL, NULL, ENV("OPENAI_API_KEY=k"), "/nonexistent/config"), 0,
                     "a missing config file is not an error");
        unlink(path);
}
