/* SPDX-License-Identifier: MIT */
/*
 * heal_llm_client: one endpoint. A call is answered from the cassette (replay), the cache, a
 * local command (exec), or HTTP jobs run together (transfer.c): one per request, or, for n > 1
 * on a wire format without "n" (Anthropic) or a server that ignored it, one per candidate.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/util.h"
#include "llm/llm-internal.h"

static int replay_client_new(heal_llm_client *c, const heal_llm_config *cfg, heal_error *err)
{
        if (!cfg->cassette || !*cfg->cassette)
                return heal_error_set(err, -EINVAL, "the replay provider needs a cassette file");
        c->replay = true;
        return cassette_load(&c->cassette, cfg->cassette, err);
}

static int exec_client_new(heal_llm_client *c, const heal_llm_config *cfg, heal_error *err)
{
        if (!cfg->command || !*cfg->command)
                return heal_error_set(err, -EINVAL,
                                      "the exec provider needs a command (--llm-command, "
                                      "HEAL_LLM_COMMAND or [llm] command= in .heal/config)");
        c->command = strdup(cfg->command);
        return c->command ? 0 : heal_error_set(err, -ENOMEM, "out of memory");
}

static int http_client_new(heal_llm_client *c, const heal_llm_config *cfg, heal_error *err)
{
        size_t n;
        int r;

        if (!cfg->base_url || !*cfg->base_url)
                return heal_error_set(err, -EINVAL, "no base URL for the model provider");
        if ((r = libcurl_load(err)) < 0)
                return r;
        c->wire = strcmp(cfg->provider, "anthropic") == 0 ? &llm_anthropic : &llm_openai;
        n = strlen(cfg->base_url);
        while (n > 0 && cfg->base_url[n - 1] == '/')
                n--;
        if (asprintf(&c->url, "%.*s%s", (int)n, cfg->base_url, c->wire->path) < 0)
                c->url = NULL;
        c->api_key = cfg->api_key ? strdup(cfg->api_key) : NULL;
        c->multi = lc.multi_init();
        c->parallel = cfg->max_parallel ? MIN(cfg->max_parallel, LLM_PARALLEL_MAX) : 8;
        if (!c->url || (cfg->api_key && !c->api_key) || !c->multi)
                return heal_error_set(err, -ENOMEM, "out of memory");
        return 0;
}

int heal_llm_client_new(heal_llm_client **ret, const heal_llm_config *cfg, heal_error *err)
{
        static const char *const known[] = { "openai", "anthropic", "replay", "exec" };
        heal_llm_client *c;
        size_t k = 0;
        int r;

        if (!ret || !cfg)
                return heal_error_set(err, -EINVAL, "invalid argument");
        while (cfg->provider && k < ELEMENTSOF(known) && strcmp(cfg->provider, known[k]) != 0)
                k++;
        if (!cfg->provider || k == ELEMENTSOF(known))
                return heal_error_set(err, -EINVAL,
                                      "unknown provider '%s' (known: openai, anthropic, replay, "
                                      "exec)",
                                      cfg->provider ? cfg->provider : "(null)");
        c = calloc(1, sizeof(*c));
        if (!c)
                return heal_error_set(err, -ENOMEM, "out of memory");
        c->cfg = *cfg;
        r = k == 2   ? replay_client_new(c, cfg, err)
            : k == 3 ? exec_client_new(c, cfg, err)
                     : http_client_new(c, cfg, err);
        c->record = !c->replay && cfg->cassette ? strdup(cfg->cassette) : NULL;
        c->cache_dir = !c->replay && cfg->cache_dir ? strdup(cfg->cache_dir) : NULL;
        if (r == 0 && ((!c->replay && cfg->cassette && !c->record) ||
                       (!c->replay && cfg->cache_dir && !c->cache_dir)))
                r = heal_error_set(err, -ENOMEM, "out of memory");
        if (r < 0) {
                heal_llm_client_free(c);
                return r;
        }
        /* copied: the caller's strings may go */
        c->cfg.base_url = c->cfg.api_key = c->cfg.provider = c->cfg.cassette = NULL;
        c->cfg.cache_dir = c->cfg.command = NULL;
        *ret = c;
        return 0;
}

heal_llm_client *heal_llm_client_free(heal_llm_client *c)
{
        if (!c)
                return NULL;
        if (c->api_key) {
                explicit_bzero(c->api_key, strlen(c->api_key));
                free(c->api_key);
        }
        free(c->url);
        free(c->command);
        free(c->record);
        free(c->cache_dir);
        budget_release(&c->budget);
        cassette_release(&c->cassette);
        for (size_t i = 0; i < c->n_idle; i++)
                lc.easy_cleanup(c->idle[i]);
        if (c->multi)
                lc.multi_cleanup(c->multi);
        free(c);
        return NULL;
}

void heal_llm_response_release(heal_llm_response *r)
{
        if (!r)
                return;
        for (size_t i = 0; i < r->n_choices; i++) {
                heal_llm_choice *ch = &r->choices[i];

                free(ch->text);
                for (size_t j = 0; j < ch->n_tool_calls; j++) {
                        free(ch->tool_calls[j].id);
                        free(ch->tool_calls[j].name);
                        free(ch->tool_calls[j].arguments);
                }
                free(ch->tool_calls);
        }
        free(r->choices);
        memset(r, 0, sizeof(*r));
}

/* Move @from's candidates after @into's and add up the usage; @from is left empty. */
static int merge(heal_llm_response *into, heal_llm_response *from)
{
        heal_llm_choice *v;

        if (into->n_choices == 0 && !into->choices) {
                unsigned attempts = into->attempts;

                *into = *from;
                into->attempts += attempts;
                memset(from, 0, sizeof(*from));
                return 0;
        }
        v = realloc(into->choices, (into->n_choices + from->n_choices) * sizeof(*v));
        if (!v)
                return -ENOMEM;
        memcpy(v + into->n_choices, from->choices, from->n_choices * sizeof(*v));
        into->choices = v;
        into->n_choices += from->n_choices;
        into->input_tokens += from->input_tokens;
        into->output_tokens += from->output_tokens;
        into->cached_tokens += from->cached_tokens;
        into->attempts += from->attempts;
        free(from->choices);
        memset(from, 0, sizeof(*from));
        return 0;
}

/* One caller request on its way to an answer. */
struct call {
        const heal_llm_request *req;
        heal_llm_response resp;
        heal_error err;
        int r;                    /* the first failure of its jobs, or 0 */
        unsigned failed_attempts; /* HTTP requests of jobs that failed */
        bool pending;             /* not answered from the cassette or the cache */
};

static unsigned wanted(const heal_llm_request *req)
{
        return req->n > 1 ? req->n : 1;
}

/* How many jobs @k needs in the first round, or, in the top-up round, to make up for a server
 * that ignored "n" (llama-server, Ollama answer one candidate). */
static size_t jobs_for(const heal_llm_client *c, const struct call *k, bool top_up)
{
        if (!k->pending)
                return 0;
        if (!top_up)
                return c->wire->native_n ? 1 : wanted(k->req);
        if (!c->wire->native_n || k->resp.n_choices == 0 || k->resp.n_choices >= wanted(k->req))
                return 0;
        return wanted(k->req) - k->resp.n_choices;
}

static void collect(struct call *k, struct llm_job *jobs, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                if (jobs[i].r == 0 && merge(&k->resp, &jobs[i].resp) == 0)
                        continue;
                k->failed_attempts += jobs[i].attempts;
                if (k->r == 0) {
                        k->r = jobs[i].r < 0 ? jobs[i].r : -ENOMEM;
                        k->err = jobs[i].err;
                }
        }
}

static int run_round(heal_llm_client *c, struct call *calls, size_t n, bool top_up)
{
        size_t total = 0, at = 0;
        struct llm_job *jobs;

        for (size_t i = 0; i < n; i++)
                total += jobs_for(c, &calls[i], top_up);
        if (total == 0)
                return 0;
        jobs = calloc(total, sizeof(*jobs));
        if (!jobs)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                size_t m = jobs_for(c, &calls[i], top_up), base = calls[i].resp.n_choices;

                for (size_t j = 0; j < m; j++)
                        if (!top_up && c->wire->native_n)
                                llm_job_init(&jobs[at + j], c->wire, calls[i].req,
                                             wanted(calls[i].req), 0);
                        else
                                llm_job_init(&jobs[at + j], c->wire, calls[i].req, 1, base + j);
                at += m;
        }
        llm_jobs_run(c, jobs, total);
        at = 0;
        for (size_t i = 0; i < n; i++) {
                size_t m = jobs_for(c, &calls[i], top_up);

                collect(&calls[i], jobs + at, m);
                at += m;
        }
        for (size_t i = 0; i < total; i++)
                llm_job_release(&jobs[i]);
        free(jobs);
        return 0;
}

static void lookup(heal_llm_client *c, struct call *k)
{
        json_t *recorded;

        if (c->replay) {
                k->r = cassette_lookup(&c->cassette, k->req, &recorded, &k->err);
                if (k->r == 0)
                        k->r = cassette_response(&k->resp, recorded, &k->err);
                c->budget.tally.cache_hits += k->r == 0;
        } else if ((k->r = budget_check(&c->budget, &k->err)) < 0) {
                return;
        } else if (c->cache_dir && cache_get(c->cache_dir, k->req, &k->resp) == 0) {
                c->budget.tally.cache_hits++;
        } else {
                k->pending = true;
        }
}

/* A fresh answer: tally it, keep it in the cache and the cassette. */
static void settle(heal_llm_client *c, struct call *k)
{
        if (k->resp.n_choices == 0) {
                if (k->r == 0)
                        k->r = heal_error_set(&k->err, -EPROTO, "the answer held no candidate");
                return;
        }
        k->r = 0;
        k->resp.attempts += k->failed_attempts;
        heal_error_clear(&k->err);
        budget_add(&c->budget, k->req->model, &k->resp);
        if (c->cache_dir)
                cache_put(c->cache_dir, k->req, &k->resp);
        if (c->record)
                k->r = cassette_append(c->record, k->req, &k->resp, &k->err);
}

int heal_llm_complete_many(heal_llm_client *c, const heal_llm_request *reqs, size_t n,
                           heal_llm_response *rets, int *rs, heal_error *errs)
{
        uint64_t start = llm_mono_ms();
        struct call *calls;
        int first = 0;

        if (!c || (n && (!reqs || !rets)))
                return -EINVAL;
        calls = calloc(n ? n : 1, sizeof(*calls));
        if (!calls)
                return -ENOMEM;
        c->budget.call_start_ms = start;
        for (size_t i = 0; i < n; i++) {
                calls[i].req = &reqs[i];
                lookup(c, &calls[i]);
        }
        if (c->wire && run_round(c, calls, n, false) == 0)
                run_round(c, calls, n, true);
        for (size_t i = 0; i < n; i++) {
                struct call *k = &calls[i];

                if (k->pending && c->command &&
                    (k->r = exec_complete(c, k->req, &k->resp, &k->err)) < 0)
                        heal_llm_response_release(&k->resp); /* a half-decoded answer */
                if (k->pending)
                        settle(c, k);
                if (k->r < 0)
                        heal_llm_response_release(&k->resp);
                rets[i] = k->resp;
                if (rs)
                        rs[i] = k->r;
                if (errs)
                        errs[i] = k->err;
                if (first == 0)
                        first = k->r;
        }
        free(calls);
        c->budget.tally.wall_ms += llm_mono_ms() - start;
        c->budget.call_start_ms = 0;
        return first;
}

int heal_llm_complete(heal_llm_client *c, const heal_llm_request *req, heal_llm_response *ret,
                      heal_error *err)
{
        int r;

        if (!c || !req || !ret)
                return heal_error_set(err, -EINVAL, "invalid argument");
        heal_llm_complete_many(c, req, 1, ret, &r, err);
        return r;
}

void heal_llm_client_set_budget(heal_llm_client *c, const heal_llm_budget *budget)
{
        if (c && budget)
                c->budget.limits = *budget;
}

int heal_llm_client_set_price(heal_llm_client *c, const char *model, double input_per_mtok,
                              double output_per_mtok, double cached_input_per_mtok)
{
        if (!c || !model)
                return -EINVAL;
        return budget_set_price(&c->budget, model, input_per_mtok, output_per_mtok,
                                cached_input_per_mtok);
}

void heal_llm_client_tally(const heal_llm_client *c, heal_llm_tally *ret)
{
        if (c && ret)
                *ret = c->budget.tally;
}
