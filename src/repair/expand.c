/* SPDX-License-Identifier: MIT */
/*
 * Expanding search nodes: the prompt for a node's own failure (its analysis, the source as its
 * workspace has it, the edits made so far, and what the earlier attempts from this node did),
 * k candidates asked of the model in one call, each answer parsed into edits and applied on top
 * of the node's patch. An answer that does not parse or apply becomes a child that does not
 * apply (its error reaches the model on the node's next expansion); a child whose workspace
 * equals an existing node's is pruned before it runs (the transposition table).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "heal/buf.h"
#include "heal/diff.h"
#include "heal/prompt.h"
#include "heal/repair.h"

#include "repair/repair-internal.h"
#include "repair/search-internal.h"

#define FEEDBACK_MAX 6

/* XXH3-128 of the workspace: each changed file's path and content, in path order. */
static void content_hash(const heal_patch *p, char out[33])
{
        XXH3_state_t *st = XXH3_createState();
        const heal_file_change *order[256];
        size_t n = 0;
        XXH128_hash_t h;

        for (size_t i = 0; i < p->n_files && n < 256; i++)
                if (!p->files[i].before || !p->files[i].after ||
                    strcmp(p->files[i].before, p->files[i].after) != 0)
                        order[n++] = &p->files[i];
        for (size_t i = 1; i < n; i++) /* insertion sort: a patch has few files */
                for (size_t j = i; j > 0 && strcmp(order[j - 1]->file, order[j]->file) > 0; j--) {
                        const heal_file_change *t = order[j];

                        order[j] = order[j - 1];
                        order[j - 1] = t;
                }
        if (!st) {
                snprintf(out, 33, "%032zx", n);
                return;
        }
        XXH3_128bits_reset(st);
        for (size_t i = 0; i < n; i++) {
                const char *after = order[i]->after ? order[i]->after : "";

                XXH3_128bits_update(st, order[i]->file, strlen(order[i]->file) + 1);
                XXH3_128bits_update(st, after, strlen(after) + 1);
        }
        h = XXH3_128bits_digest(st);
        XXH3_freeState(st);
        snprintf(out, 33, "%016llx%016llx", (unsigned long long)h.high64,
                 (unsigned long long)h.low64);
}

/* Lines added plus removed, as a minimal diff counts them. */
static unsigned changed_lines(const heal_patch *p)
{
        heal_diff_stat st;

        if (heal_patch_diff_stat(&st, p, NULL) < 0)
                return 10000; /* too big to diff: a huge patch */
        return (unsigned)(st.lines_added + st.lines_removed);
}

int search_add_node(struct search *s, int parent, const char *source, heal_patch *patch,
                    char *answer)
{
        struct snode *grown = realloc(s->v, (s->n + 1) * sizeof(*s->v)), *x;

        if (!grown)
                return -ENOMEM;
        s->v = grown;
        x = &s->v[s->n];
        memset(x, 0, sizeof(*x));
        x->pub.id = (int)s->n;
        x->pub.parent = parent;
        x->pub.depth = parent >= 0 ? s->v[parent].pub.depth + 1 : 0;
        x->pub.source = source;
        x->pub.answer = answer;
        if (patch) {
                x->pub.patch = *patch;
                memset(patch, 0, sizeof(*patch));
        }
        content_hash(&x->pub.patch, x->content);
        x->pub.lines_changed = changed_lines(&x->pub.patch);
        return (int)s->n++;
}

/* Classify at once what needs no run: nothing to apply, no change, a workspace seen before. */
void search_preclassify(struct search *s, int id, int apply_r, const heal_error *e)
{
        struct snode *x = &s->v[id];

        if (apply_r < 0 || x->pub.lines_changed == 0) {
                x->pub.outcome = HEAL_OUTCOME_DOES_NOT_APPLY;
                x->pub.why = strdup(apply_r < 0 ? e->msg : "the edits change nothing");
                x->evaluated = true;
                return;
        }
        for (size_t i = 0; i + 1 < s->n; i++)
                if (!strcmp(s->v[i].content, x->content)) {
                        char why[64];

                        snprintf(why, sizeof(why), "the same workspace as node %zu", i);
                        x->pub.outcome = HEAL_OUTCOME_PRUNED;
                        x->pub.why = strdup(why);
                        x->evaluated = true;
                        return;
                }
}

/* One child of @parent from a model's answer. */
static int child_from_answer(struct search *s, int parent, const char *text)
{
        heal_edits edits = { 0 };
        heal_patch patch = { 0 };
        heal_error e = HEAL_ERROR_INIT;
        heal_apply_opts ao = { .tree = s->o->tree, .protected = s->o->protected };
        char *answer = strdup(text ? text : "");
        int r, id;

        if (!answer)
                return -ENOMEM;
        ao.base = &s->v[parent].pub.patch;
        r = heal_edits_parse(&edits, answer, &e);
        if (r >= 0 && edits.n == 0)
                r = heal_error_set(&e, -ENOENT, "the answer has no edit block");
        if (r >= 0)
                r = heal_edits_apply(&edits, &ao, &patch, &e);
        heal_edits_release(&edits);
        if (r == -ENOMEM) {
                free(answer);
                return r;
        }
        if (r < 0) /* the child keeps its parent's workspace: it changed nothing */
                heal_patch_copy(&patch, &s->v[parent].pub.patch);
        id = search_add_node(s, parent, "model", &patch, answer);
        if (id < 0) {
                heal_patch_release(&patch);
                free(answer);
                return id;
        }
        if (r < 0)
                s->v[id].pub.lines_changed = 0;
        search_preclassify(s, id, r, &e);
        r = node_check_gaming(s, &s->v[id], &e);
        return r == -ENOMEM ? r : id;
}

static void join_argv(heal_buf *b, const char *const *argv)
{
        for (size_t i = 0; argv[i]; i++)
                heal_buf_printf(b, "%s%s", i ? " " : "", argv[i]);
}

/* What the earlier attempts from @id did, so that a new request is told (and differs). */
static void add_feedback(heal_buf *b, const struct search *s, int id)
{
        unsigned shown = 0;

        for (size_t i = 1; i < s->n && shown < FEEDBACK_MAX; i++) {
                const struct snode *c = &s->v[i];

                if (c->pub.parent != id || !c->evaluated)
                        continue;
                if (!shown++)
                        heal_buf_puts(b, "\n## Attempts that did not work\n\nDo not repeat "
                                         "them; each is followed by what it gave.\n\n");
                heal_buf_printf(b, "- attempt %u (%s): %s\n", shown,
                                heal_outcome_name(c->pub.outcome), c->pub.why ? c->pub.why : "");
        }
}

static void add_edits_so_far(heal_buf *b, const struct snode *x)
{
        heal_buf_puts(b, "\n## Edits already made\n\nThe files below were already changed to "
                         "fix an earlier failure; the source shown above is as they are now, and "
                         "the failure above is what the command gives with them. Fix it on top "
                         "of them (keep what they fixed):\n\n");
        for (size_t i = 0; i < x->pub.patch.n_files; i++)
                heal_buf_printf(b, "- %s\n", x->pub.patch.files[i].file);
}

int node_prompt(const struct search *s, int id, heal_prompt *ret, heal_buf *user, heal_error *err)
{
        const struct snode *x = &s->v[id];
        heal_buf cmd = HEAL_BUF_INIT(4096);
        heal_context ctx = { 0 };
        heal_context_opts co = { .tree = s->o->tree,
                                 .token_budget = s->o->context_budget,
                                 .servers = id == 0 ? s->o->servers : NULL };
        heal_prompt_opts po = { .tree = s->o->tree,
                                .protected = s->o->protected,
                                .exit_code = x->exit_code };
        int r;

        join_argv(&cmd, s->o->argv);
        po.command = cmd.data ? cmd.data : "";
        repair_overlay_set(&x->pub.patch);
        r = heal_context_build(&ctx, &x->an, &co, err);
        if (r >= 0)
                r = heal_prompt_build(ret, &x->an, &ctx, &po, err);
        repair_overlay_set(NULL);
        heal_context_release(&ctx);
        heal_buf_release(&cmd);
        if (r < 0)
                return r;
        heal_buf_puts(user, ret->user);
        if (x->pub.depth > 0)
                add_edits_so_far(user, x);
        add_feedback(user, s, id);
        return 0;
}

static void count_budget(struct search *s, int r, const heal_error *e)
{
        if (r == -EDQUOT)
                s->budget_out = true;
        else if (r < 0 && !s->stop[0])
                snprintf(s->stop, sizeof(s->stop), "model error: %s", e->msg);
}

int search_expand(struct search *s, const int *ids, size_t n, int *out, size_t *n_out,
                  heal_error *err)
{
        heal_llm_request reqs[8] = { 0 };
        heal_llm_response rets[8] = { 0 };
        heal_llm_message msgs[8];
        heal_prompt prompts[8] = { 0 };
        heal_buf users[8];
        heal_error errs[8];
        int rs[8] = { 0 }, r = 0;

        n = n > 8 ? 8 : n;
        for (size_t i = 0; i < n; i++) {
                heal_buf_init(&users[i], 256u << 10);
                errs[i] = (heal_error)HEAL_ERROR_INIT;
        }
        for (size_t i = 0; r >= 0 && i < n; i++) {
                r = node_prompt(s, ids[i], &prompts[i], &users[i], err);
                msgs[i] = (heal_llm_message){ .role = HEAL_LLM_USER, .content = users[i].data };
                reqs[i] = (heal_llm_request)HEAL_LLM_REQUEST_INIT;
                reqs[i].model = s->o->model;
                reqs[i].system = prompts[i].system;
                reqs[i].messages = &msgs[i];
                reqs[i].n_messages = 1;
                reqs[i].n = s->k;
                reqs[i].temperature = s->k > 1 ? 0.7 : 0.0;
                reqs[i].max_tokens = 4096;
                s->v[ids[i]].expansions++;
                if (s->o->on_event)
                        s->o->on_event(HEAL_EVENT_EXPAND, &s->v[ids[i]].pub, s->k, s->o->userdata);
        }
        if (r >= 0 && !repair_canceled()) {
                repair_model_call(true);
                heal_llm_complete_many(s->o->llm, reqs, n, rets, rs, errs);
                repair_model_call(false);
                s->model_calls += (unsigned)n;
        }
        for (size_t i = 0; r >= 0 && i < n; i++) {
                count_budget(s, rs[i], &errs[i]);
                for (size_t c = 0; r >= 0 && rs[i] >= 0 && c < rets[i].n_choices; c++) {
                        r = child_from_answer(s, ids[i], rets[i].choices[c].text);
                        if (r >= 0)
                                out[(*n_out)++] = r;
                        else
                                heal_error_set(err, r, "out of memory");
                }
        }
        for (size_t i = 0; i < n; i++) {
                heal_llm_response_release(&rets[i]);
                heal_prompt_release(&prompts[i]);
                heal_buf_release(&users[i]);
        }
        return r < 0 ? r : 0;
}
