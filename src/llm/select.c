/* SPDX-License-Identifier: MIT */
/*
 * Choosing the model: "PROVIDER:MODEL" from --model, HEAL_MODEL or .heal/config, in that order;
 * the provider's URL and key from its usual environment variables; with nothing named, an API
 * key in the environment implies its provider. Every OpenAI-compatible service is the "openai"
 * wire format with another base URL.
 * See: inih (https://github.com/benhoyt/inih) for the config file format.
 */
#include <errno.h>
#include <ini.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/util.h"
#include "llm/llm-internal.h"

struct provider {
        const char *name;
        const char *wire;     /* "openai", "anthropic", "replay" */
        const char *base_url; /* the hosted default */
        const char *url_env;  /* overrides the base URL */
        const char *key_env;  /* NULL: no key needed */
        const char *default_model;
};

static const struct provider providers[] = {
        { "openai", "openai", "https://api.openai.com/v1", "OPENAI_BASE_URL", "OPENAI_API_KEY",
          "gpt-4.1-mini" },
        { "openrouter", "openai", "https://openrouter.ai/api/v1", NULL, "OPENROUTER_API_KEY",
          "openai/gpt-4.1-mini" },
        { "gemini", "openai", "https://generativelanguage.googleapis.com/v1beta/openai", NULL,
          "GEMINI_API_KEY", "gemini-2.5-flash" },
        { "ollama", "openai", "http://localhost:11434/v1", "OLLAMA_HOST", NULL,
          "qwen2.5-coder:7b" },
        { "anthropic", "anthropic", "https://api.anthropic.com/v1", NULL, "ANTHROPIC_API_KEY",
          "claude-sonnet-4-5" },
        { "replay", "replay", "", NULL, NULL, "gpt-4.1-mini" },
        { "exec", "exec", "", NULL, NULL, "local" },
};

static const char *env_get(const char *const *envp, const char *name)
{
        size_t n = strlen(name);

        for (size_t i = 0; envp && envp[i]; i++)
                if (strncmp(envp[i], name, n) == 0 && envp[i][n] == '=' && envp[i][n + 1])
                        return envp[i] + n + 1;
        return NULL;
}

struct ini_llm {
        char model[256], url[512], cassette[512], command[1024];
};

static int on_ini(void *user, const char *section, const char *name, const char *value)
{
        struct ini_llm *c = user;

        if (strcmp(section, "llm") != 0)
                return 1; /* other sections belong to other parts of heal */
        if (strcmp(name, "model") == 0)
                snprintf(c->model, sizeof(c->model), "%s", value);
        else if (strcmp(name, "url") == 0)
                snprintf(c->url, sizeof(c->url), "%s", value);
        else if (strcmp(name, "cassette") == 0)
                snprintf(c->cassette, sizeof(c->cassette), "%s", value);
        else if (strcmp(name, "command") == 0)
                snprintf(c->command, sizeof(c->command), "%s", value);
        else
                return 0; /* a misspelt key would be silently ignored otherwise */
        return 1;
}

static const struct provider *find_provider(const char *name, size_t len)
{
        for (size_t i = 0; i < ELEMENTSOF(providers); i++)
                if (strlen(providers[i].name) == len && strncmp(providers[i].name, name, len) == 0)
                        return &providers[i];
        return NULL;
}

/* The model named by flag, environment or config, with where it came from; NULL if none. */
static const char *named_model(const char *flag, const char *const *envp, const struct ini_llm *ini,
                               const char **ret_source)
{
        const char *m;

        if (flag && *flag) {
                *ret_source = "--model";
                return flag;
        }
        if ((m = env_get(envp, "HEAL_MODEL"))) {
                *ret_source = "HEAL_MODEL";
                return m;
        }
        if (ini->model[0]) {
                *ret_source = ".heal/config";
                return ini->model;
        }
        return NULL;
}

/* With no model named, the first provider whose key is set. */
static const struct provider *implied(const char *const *envp, const char **ret_source)
{
        for (size_t i = 0; i < ELEMENTSOF(providers); i++)
                if (providers[i].key_env && env_get(envp, providers[i].key_env)) {
                        *ret_source = providers[i].key_env;
                        return &providers[i];
                }
        if (env_get(envp, "OLLAMA_HOST")) {
                *ret_source = "OLLAMA_HOST";
                return find_provider("ollama", 6);
        }
        return NULL;
}

static void base_url(heal_llm_selection *s, const struct provider *p, const char *url_flag,
                     const char *const *envp, const struct ini_llm *ini)
{
        const char *env = p->url_env ? env_get(envp, p->url_env) : NULL;

        if (url_flag && *url_flag)
                snprintf(s->base_url, sizeof(s->base_url), "%s", url_flag);
        else if (env && strcmp(p->name, "ollama") == 0) /* OLLAMA_HOST is host[:port] */
                snprintf(s->base_url, sizeof(s->base_url), "%s%s/v1",
                         strstr(env, "://") ? "" : "http://", env);
        else if (env)
                snprintf(s->base_url, sizeof(s->base_url), "%s", env);
        else if (ini->url[0])
                snprintf(s->base_url, sizeof(s->base_url), "%s", ini->url);
        else
                snprintf(s->base_url, sizeof(s->base_url), "%s", p->base_url);
}

static int fill(heal_llm_selection *s, const struct provider *p, const char *url_flag,
                const char *const *envp, const struct ini_llm *ini, heal_error *err)
{
        const char *key = p->key_env ? env_get(envp, p->key_env) : NULL;
        const char *cassette = env_get(envp, "HEAL_CASSETTE");
        const char *command = env_get(envp, "HEAL_LLM_COMMAND");

        snprintf(s->provider, sizeof(s->provider), "%s", p->name);
        base_url(s, p, url_flag, envp, ini);
        /* A project's .heal/config comes with the project (a clone is owned by whoever cloned
         * it): it may choose a URL only when no key goes there, and never a command. */
        if (key && ini->url[0] && !strcmp(s->base_url, ini->url))
                return heal_error_set(err, -EPERM,
                                      "the project's .heal/config sets url = %s, and heal would "
                                      "send your %s there: heal sends a key only to a URL you "
                                      "chose (--llm-url%s%s)",
                                      ini->url, p->key_env, p->url_env ? " or " : "",
                                      p->url_env ? p->url_env : "");
        if (key) {
                snprintf(s->api_key, sizeof(s->api_key), "%s", key);
                snprintf(s->key_from, sizeof(s->key_from), "%s", p->key_env);
        } else if (p->key_env && strcmp(s->base_url, p->base_url) == 0) {
                return heal_error_set(err, -EINVAL,
                                      "%s:%s needs an API key: set %s (or point --llm-url at a "
                                      "local server)",
                                      p->name, s->model, p->key_env);
        }
        s->config = (heal_llm_config)HEAL_LLM_CONFIG_INIT;
        s->config.provider = p->wire;
        s->config.base_url = s->base_url;
        s->config.api_key = s->api_key[0] ? s->api_key : NULL;
        if (strcmp(p->wire, "replay") == 0) {
                snprintf(s->cassette, sizeof(s->cassette), "%s",
                         cassette ? cassette : ini->cassette);
                if (!s->cassette[0])
                        return heal_error_set(err, -EINVAL,
                                              "the replay provider needs a cassette: set "
                                              "HEAL_CASSETTE or [llm] cassette= in .heal/config");
                s->config.cassette = s->cassette;
        }
        if (strcmp(p->wire, "exec") == 0) {
                if (!command && ini->command[0])
                        return heal_error_set(err, -EPERM,
                                              "the project's .heal/config sets command = %s: "
                                              "heal does not run a command a project's file "
                                              "names (a cloned repository could run anything as "
                                              "you); set HEAL_LLM_COMMAND instead",
                                              ini->command);
                snprintf(s->command, sizeof(s->command), "%s", command ? command : "");
                if (!s->command[0])
                        return heal_error_set(err, -EINVAL,
                                              "the exec provider needs a command: set "
                                              "HEAL_LLM_COMMAND");
                s->config.command = s->command;
        }
        return 0;
}

/* The config file and its directory belong to the user (or root) and only they may write
 * them: a file another user can write could choose where prompts go. A missing file is fine. */
static int config_trusted(const char *path, heal_error *err)
{
        char dir[PATH_MAX];
        const char *slash = strrchr(path, '/');
        const char *what[2] = { path, dir };
        struct stat st;

        snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
        for (size_t i = 0; i < 2; i++) {
                if (stat(what[i], &st) < 0)
                        return 0;
                /* in a sticky directory (/tmp) others cannot replace the user's file */
                if ((st.st_uid != geteuid() && st.st_uid != 0) ||
                    ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(i == 1 && (st.st_mode & S_ISVTX))))
                        return heal_error_set(err, -EPERM,
                                              "'%s' is %s: heal does not read a model setting "
                                              "another user could have written; delete it, or "
                                              "chown/chmod go-w it",
                                              what[i],
                                              st.st_mode & (S_IWGRP | S_IWOTH)
                                                      ? "writable by others"
                                                      : "owned by another user");
        }
        return 0;
}

int heal_llm_select(heal_llm_selection *ret, const char *model_flag, const char *url_flag,
                    const char *const *envp, const char *config_path, heal_error *err)
{
        heal_llm_selection s = { 0 };
        struct ini_llm ini;
        const struct provider *p;
        const char *named, *source = "", *colon;
        int r;

        if (!ret)
                return heal_error_set(err, -EINVAL, "invalid argument");
        memset(&ini, 0, sizeof(ini));
        if (config_path && (r = config_trusted(config_path, err)) < 0)
                return r;
        if (config_path && (r = ini_parse(config_path, on_ini, &ini)) > 0)
                return heal_error_set(err, -EBADMSG,
                                      "'%s' line %d: not 'key = value', or a key [llm] does not "
                                      "have (it has model, url, cassette, command)",
                                      config_path, r);
        named = named_model(model_flag, envp, &ini, &source);
        if (named) {
                colon = strchr(named, ':');
                if (!colon || colon == named || !colon[1])
                        return heal_error_set(err, -EINVAL,
                                              "model '%s' (from %s) names no provider: write "
                                              "PROVIDER:MODEL, e.g. openai:gpt-4.1-mini",
                                              named, source);
                p = find_provider(named, (size_t)(colon - named));
                if (!p)
                        return heal_error_set(err, -EINVAL,
                                              "unknown provider '%.*s' (from %s); known: openai, "
                                              "openrouter, gemini, ollama, anthropic, replay, "
                                              "exec",
                                              (int)(colon - named), named, source);
                snprintf(s.model, sizeof(s.model), "%s", colon + 1);
        } else if ((p = implied(envp, &source))) {
                snprintf(s.model, sizeof(s.model), "%s", p->default_model);
        } else {
                return heal_error_set(
                        err, -ENOENT,
                        "no model is configured: set HEAL_MODEL=openai:gpt-4.1-mini "
                        "and OPENAI_API_KEY, or pass --model PROVIDER:MODEL, or put "
                        "[llm] model=... in .heal/config; for a local server: "
                        "--model ollama:qwen2.5-coder:7b, or --model openai:NAME --llm-url "
                        "http://127.0.0.1:PORT/v1 (llama-server, vLLM)%s",
                        url_flag && *url_flag ? " (--llm-url says where, not which model: add "
                                                "--model openai:NAME for an OpenAI-compatible "
                                                "server)"
                        : env_get(envp, "HEAL_LLM_COMMAND") ? " (HEAL_LLM_COMMAND is set: add "
                                                              "HEAL_MODEL=exec:NAME to use it)"
                                                            : "");
        }
        snprintf(s.source, sizeof(s.source), "%s", source);
        r = fill(&s, p, url_flag, envp, &ini, err);
        if (r < 0) {
                heal_llm_selection_release(&s);
                return r;
        }
        *ret = s;
        /* config's pointers must point into *ret, not into the local copy */
        ret->config.base_url = ret->base_url;
        ret->config.api_key = ret->api_key[0] ? ret->api_key : NULL;
        ret->config.cassette = ret->cassette[0] ? ret->cassette : NULL;
        ret->config.command = ret->command[0] ? ret->command : NULL;
        explicit_bzero(s.api_key, sizeof(s.api_key));
        return 0;
}

void heal_llm_selection_release(heal_llm_selection *s)
{
        if (s)
                explicit_bzero(s->api_key, sizeof(s->api_key));
}
