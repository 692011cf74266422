/* SPDX-License-Identifier: MIT */
/*
 * What a client spends: requests, tokens, money and time, checked against a budget before each
 * request. Money comes from a per-model price table (US dollars per million tokens), list prices
 * as published by the providers; callers override or add models with
 * heal_llm_client_set_price().
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm/llm-internal.h"

static const struct llm_price builtin_prices[] = {
        /* model prefix, input, output, cached input ($ per million tokens) */
        { "gpt-4o-mini", 0.15, 0.60, 0.075 },     { "gpt-4o", 2.50, 10.00, 1.25 },
        { "gpt-4.1-nano", 0.10, 0.40, 0.025 },    { "gpt-4.1-mini", 0.40, 1.60, 0.10 },
        { "gpt-4.1", 2.00, 8.00, 0.50 },          { "claude-3-5-haiku", 0.80, 4.00, 0.08 },
        { "claude-sonnet-4", 3.00, 15.00, 0.30 }, { "claude-3-7-sonnet", 3.00, 15.00, 0.30 },
};

static const struct llm_price *find_price(const struct llm_price *v, size_t n, const char *model)
{
        const struct llm_price *best = NULL;

        /* The longest matching prefix: "gpt-4.1-mini" before "gpt-4.1". */
        for (size_t i = 0; i < n; i++)
                if (strncmp(model, v[i].model, strlen(v[i].model)) == 0 &&
                    (!best || strlen(v[i].model) > strlen(best->model)))
                        best = &v[i];
        return best;
}

const struct llm_price *budget_price(const struct llm_budget_state *b, const char *model)
{
        const struct llm_price *p = find_price(b->prices, b->n_prices, model);

        return p ? p
                 : find_price(builtin_prices, sizeof(builtin_prices) / sizeof(builtin_prices[0]),
                              model);
}

int budget_set_price(struct llm_budget_state *b, const char *model, double in, double out,
                     double cached)
{
        struct llm_price *grown = realloc(b->prices, (b->n_prices + 1) * sizeof(*grown));
        char *name = strdup(model);

        if (!grown || !name) {
                free(name);
                if (grown)
                        b->prices = grown;
                return -ENOMEM;
        }
        b->prices = grown;
        b->prices[b->n_prices++] = (struct llm_price){ name, in, out, cached };
        return 0;
}

void budget_release(struct llm_budget_state *b)
{
        for (size_t i = 0; i < b->n_prices; i++)
                free((char *)(uintptr_t)b->prices[i].model);
        free(b->prices);
        b->prices = NULL;
        b->n_prices = 0;
}

int budget_check(const struct llm_budget_state *b, heal_error *err)
{
        const heal_llm_budget *l = &b->limits;
        const heal_llm_tally *t = &b->tally;
        uint64_t tokens = t->input_tokens + t->output_tokens, wall;

        if (l->max_requests && t->requests >= l->max_requests)
                return heal_error_set(err, -EDQUOT, "budget exhausted: %llu of %llu requests",
                                      (unsigned long long)t->requests,
                                      (unsigned long long)l->max_requests);
        if (l->max_tokens && tokens >= l->max_tokens)
                return heal_error_set(err, -EDQUOT, "budget exhausted: %llu of %llu tokens",
                                      (unsigned long long)tokens,
                                      (unsigned long long)l->max_tokens);
        if (l->max_cost_micro_usd && t->cost_micro_usd >= l->max_cost_micro_usd)
                return heal_error_set(err, -EDQUOT, "budget exhausted: $%.4f of $%.4f",
                                      (double)t->cost_micro_usd / 1e6,
                                      (double)l->max_cost_micro_usd / 1e6);
        /* Time of the call in progress counts too: a retry after a long wait is refused. */
        wall = t->wall_ms + (b->call_start_ms ? llm_mono_ms() - b->call_start_ms : 0);
        if (l->max_wall_ms && wall >= l->max_wall_ms)
                return heal_error_set(err, -EDQUOT, "budget exhausted: %llu of %llu ms",
                                      (unsigned long long)wall, (unsigned long long)l->max_wall_ms);
        return 0;
}

void budget_add(struct llm_budget_state *b, const char *model, const heal_llm_response *r)
{
        const struct llm_price *p = budget_price(b, model);
        heal_llm_tally *t = &b->tally;

        t->input_tokens += r->input_tokens;
        t->output_tokens += r->output_tokens;
        t->cached_tokens += r->cached_tokens;
        if (p) {
                uint64_t fresh =
                        r->input_tokens > r->cached_tokens ? r->input_tokens - r->cached_tokens : 0;

                /* $ per million tokens = micro-$ per token */
                t->cost_micro_usd +=
                        (uint64_t)((double)fresh * p->input + (double)r->cached_tokens * p->cached +
                                   (double)r->output_tokens * p->output + 0.5);
        }
}

void heal_llm_tally_format(const heal_llm_tally *t, char *buf, size_t len)
{
        /* cents show as $0.0123; less than that keeps its digits: $0.000042 */
        snprintf(
                buf, len,
                t->cost_micro_usd && t->cost_micro_usd < 10000
                        ? "%llu request%s (%llu from cache or cassette), %llu tokens in (%llu cached), %llu "
                          "out, $%.6f, %.1f s"
                        : "%llu request%s (%llu from cache or cassette), %llu tokens in (%llu cached), %llu "
                          "out, $%.4f, %.1f s",
                (unsigned long long)t->requests, t->requests == 1 ? "" : "s",
                (unsigned long long)t->cache_hits, (unsigned long long)t->input_tokens,
                (unsigned long long)t->cached_tokens, (unsigned long long)t->output_tokens,
                (double)t->cost_micro_usd / 1e6, (double)t->wall_ms / 1000.0);
}
