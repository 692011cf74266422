/* SPDX-License-Identifier: MIT */
#ifndef HEAL_GEN_H
#define HEAL_GEN_H

/*
 * heal gen: a model writes a program for a task, heal runs it (heal/runner.h), and when it does
 * not compile, fails or hangs, the error goes back to the model in the same conversation and a
 * corrected program is asked for, a bounded number of times.
 *
 * Lifecycle: heal_gen_run() with a struct heal_gen_opts (a model client and a runner that the
 * caller owns), heal_gen_result_release(). heal_gen_extract() is the code extractor on its own.
 */

#include <stdbool.h>
#include <stddef.h>

#include "heal/error.h"
#include "heal/llm.h"
#include "heal/runner.h"

/**
 * struct heal_gen_code - The program found in a model's answer.
 * @code:     the code, NUL-terminated, with CRLF line ends made LF; owned (free with
 *            heal_gen_code_release()).
 * @len:      length of @code, bytes.
 * @tag:      the fence's language tag as written, lowercased ("go", "golang", "main.go"), or ""
 *            (an untagged fence, or no fence at all).
 * @block:    the chosen fenced block, counted from 1 in the answer; 0 when the answer had no
 *            fence and the code was taken from the text itself.
 * @n_blocks: fenced blocks in the answer, of any language.
 * @closed:   the block's fence was closed (false: it ran to the end of the answer, as when the
 *            answer was cut at the token limit).
 * @complete: the code looks like a whole program: Go "package main" with "func main()", C a
 *            main function; always true for the interpreted languages.
 */
typedef struct heal_gen_code {
        char *code;
        size_t len;
        char tag[32];
        unsigned block;
        unsigned n_blocks;
        bool closed;
        bool complete;
} heal_gen_code;

/**
 * heal_gen_extract() - Find the program for @lang in a model's answer.
 * @ret:    filled on success; release with heal_gen_code_release(). Untouched on failure.
 * @answer: the answer's text (need not be NUL-terminated); borrowed.
 * @len:    length of @answer, bytes.
 * @lang:   a driver name or alias (heal_runner_lang_canonical()).
 * @err:    optional; on -ENOMSG a message meant to be shown to the model.
 *
 * Fences are CommonMark's (0.30, section 4.5): three or more backticks or tildes, indented at
 * most three spaces, an info string whose first word is the tag ("go", "Go", "golang",
 * "{python}", a file name such as "main.go"; backtick fences' info strings hold no backtick),
 * closed by a run of the same character at least as long, or by the end of the answer. Blocks
 * tagged with @lang (any alias; sh, bash and shell count alike) and untagged blocks are
 * candidates; the chosen one is the longest complete program among those tagged @lang, else
 * among the untagged, else the longest incomplete one (later blocks win ties: a corrected
 * version usually comes last). Without any fence, Go and C code is taken from its first
 * "package" or "#include" line to its last closing brace at the start of a line, and for the
 * interpreters the whole answer is the code.
 *
 * Return: 0; -EINVAL for bad arguments or an unknown @lang; -ENOMSG when the answer holds no
 *         code for @lang (no block, only empty blocks, or only blocks tagged with another
 *         language, which the message names); -ENOMEM.
 * See: https://spec.commonmark.org/0.30/#fenced-code-blocks
 */
int heal_gen_extract(heal_gen_code *ret, const char *answer, size_t len, const char *lang,
                     heal_error *err);

/** heal_gen_code_release() - Free what @c owns and zero it; accepts a zeroed struct. */
void heal_gen_code_release(heal_gen_code *c);

/**
 * struct heal_gen_attempt - One answer of the model and what running it gave.
 * @answer:        the model's text; owned.
 * @code:          the program extracted from it (@code.code NULL when none was found).
 * @extract_error: why no program was found ("" when one was).
 * @ran:           the program was run; @result is then valid.
 * @result:        the runner's verdict; owned.
 */
typedef struct heal_gen_attempt {
        char *answer;
        heal_gen_code code;
        char extract_error[HEAL_ERROR_MSG_MAX];
        bool ran;
        heal_runner_result result;
} heal_gen_attempt;

/**
 * enum heal_gen_event - What a progress callback is told.
 * @HEAL_GEN_ASKING:   a request to the model is about to be sent (the attempt is still empty).
 * @HEAL_GEN_ANSWERED: the answer came and the code was extracted (or not: @extract_error).
 * @HEAL_GEN_RAN:      the program ran; @result holds the verdict.
 */
typedef enum heal_gen_event {
        HEAL_GEN_ASKING,
        HEAL_GEN_ANSWERED,
        HEAL_GEN_RAN,
} heal_gen_event;

/**
 * enum heal_gen_verdict - How heal_gen_run() ended (a verdict is not an error).
 * @HEAL_GEN_OK:          a program ran with status ok (the last attempt).
 * @HEAL_GEN_FAILED:      every attempt failed; @message says how the last one did.
 * @HEAL_GEN_BUDGET:      the model's budget ran out (heal_llm_client_set_budget()).
 * @HEAL_GEN_MODEL_ERROR: the model could not be asked (network, HTTP error, replay miss).
 * @HEAL_GEN_SETUP_ERROR: the runner could not run the program (a missing toolchain, the
 *                        sandbox): not the model's fault, so not retried.
 * @HEAL_GEN_CANCELED:    the runner was canceled (heal_runner_cancel()).
 */
typedef enum heal_gen_verdict {
        HEAL_GEN_OK,
        HEAL_GEN_FAILED,
        HEAL_GEN_BUDGET,
        HEAL_GEN_MODEL_ERROR,
        HEAL_GEN_SETUP_ERROR,
        HEAL_GEN_CANCELED,
} heal_gen_verdict;

/**
 * struct heal_gen_opts - A generation's inputs; every pointer borrowed for the call.
 * @llm:         the model client; required.
 * @model:       the model name for requests; required.
 * @runner:      runs each program; required (heal_runner_cancel() on it stops the loop).
 * @task:        what the program must do, in the user's words; required.
 * @lang:        a driver name or alias (NULL: "go").
 * @retries:     corrected programs asked after the first, at most (0: 3).
 * @run:         stdin, arguments and limits for each run (@run.files and @run.lang are set by
 *               heal_gen_run() and ignored here).
 * @temperature: as heal_llm_request (negative: the provider's default).
 * @max_tokens:  of each answer (0: the provider's default).
 * @on_event:    progress, called on the calling thread; may be NULL.
 * @userdata:    passed to @on_event.
 */
typedef struct heal_gen_opts {
        heal_llm_client *llm;
        const char *model;
        heal_runner *runner;
        const char *task;
        const char *lang;
        unsigned retries;
        heal_runner_opts run;
        double temperature;
        unsigned max_tokens;
        void (*on_event)(heal_gen_event ev, const heal_gen_attempt *a, unsigned n, void *userdata);
        void *userdata;
} heal_gen_opts;

#define HEAL_GEN_OPTS_INIT                           \
 {                                                   \
  .run = HEAL_RUNNER_OPTS_INIT, .temperature = -1.0, \
 }

/**
 * struct heal_gen_result - What heal_gen_run() did; release with heal_gen_result_release().
 * @verdict:    how it ended.
 * @attempts:   every attempt in order, @n_attempts of them; owned. The last one is the program
 *              that ran ok when @verdict is HEAL_GEN_OK.
 * @message:    one line: the last attempt's failure (or the model's error); "" when ok.
 * @tally:      what the model cost (heal_llm_client_tally() at the end).
 */
typedef struct heal_gen_result {
        heal_gen_verdict verdict;
        heal_gen_attempt *attempts;
        size_t n_attempts;
        char message[HEAL_ERROR_MSG_MAX];
        heal_llm_tally tally;
} heal_gen_result;

/**
 * heal_gen_run() - Ask for a program, run it, feed its failure back, up to @o->retries times.
 * @ret: filled on success, whatever the verdict; release with heal_gen_result_release().
 *       Untouched on failure.
 * @o:   the inputs.
 * @err: optional.
 *
 * One conversation: the system prompt asks for one complete program in one fenced block; each
 * failure is told as the next user turn with what the model needs to fix it (the compiler's
 * output, the exit status or signal with the tail of stderr and stdout, the timeout and the
 * stacks the program printed on SIGQUIT, the limit that stopped it, or why no code was found),
 * ending with a request for the whole corrected program. Retrying after a failure fed back is
 * what published agents found most effective (Chen et al., "Teaching Large Language Models to
 * Self-Debug", ICLR 2024).
 *
 * Context: blocking (model calls and runs); forks; not thread-safe per client or runner.
 * Return: 0 whatever the verdict; -EINVAL for missing options or an unknown @lang; -ENOMEM.
 */
int heal_gen_run(heal_gen_result *ret, const heal_gen_opts *o, heal_error *err);

/** heal_gen_result_release() - Free what @r owns and zero it; accepts a zeroed result. */
void heal_gen_result_release(heal_gen_result *r);

/** heal_gen_verdict_name() - "ok", "failed", "budget", "model_error", "setup_error",
 * "canceled"; "?" when out of range. */
const char *heal_gen_verdict_name(heal_gen_verdict v);

#endif
