/* SPDX-License-Identifier: MIT */
#ifndef HEAL_ASK_H
#define HEAL_ASK_H

/*
 * heal ask: a tool-calling conversation. The model is offered one tool, run_code (language,
 * code, stdin, timeout_ms); heal runs each call in the sandbox (heal/runner.h), returns the
 * result as the tool's message, and asks again, until the model answers in text.
 *
 * Lifecycle: heal_ask_run() with a struct heal_ask_opts (a model client and a runner that the
 * caller owns), heal_ask_result_release().
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "heal/error.h"
#include "heal/llm.h"
#include "heal/runner.h"

/**
 * heal_ask_run_code_tool() - The run_code tool as the model sees it: name "run_code", a
 * description, and the JSON Schema of its arguments ({"language": one of heal's drivers,
 * "code": string, "stdin": string, "timeout_ms": integer}; language and code required).
 * Return: a static tool description, for heal_llm_request.tools.
 */
const heal_llm_tool *heal_ask_run_code_tool(void);

/**
 * struct heal_ask_call - One tool call of the model and what heal answered; strings owned.
 * @turn:      the model turn (from 1) that made the call.
 * @id:        the provider's call id.
 * @name:      the tool the model named (not always run_code).
 * @arguments: the arguments as the model wrote them.
 * @result:    the tool message sent back: a JSON object (status, exit_code, signal, stdout,
 *             stderr, compile_output, message; outputs cut to their last bytes) or,
 *             for a call that could not run, {"error": "..."} saying how to call it.
 * @ran:       the program ran (@status is then the runner's verdict).
 * @status:    the verdict when @ran.
 * @wall_ms:   the run's wall time (both stages), ms.
 */
typedef struct heal_ask_call {
        unsigned turn;
        char *id;
        char *name;
        char *arguments;
        char *result;
        bool ran;
        heal_exec_status status;
        uint64_t wall_ms;
} heal_ask_call;

/**
 * enum heal_ask_event - What a progress callback is told.
 * @HEAL_ASK_ASKING:    a model turn is about to be asked (@call NULL).
 * @HEAL_ASK_CALLING:   @call is about to run (@call->result still NULL).
 * @HEAL_ASK_CALLED:    @call ran or was refused; @call->result holds the answer.
 */
typedef enum heal_ask_event {
        HEAL_ASK_ASKING,
        HEAL_ASK_CALLING,
        HEAL_ASK_CALLED,
} heal_ask_event;

/**
 * enum heal_ask_verdict - How heal_ask_run() ended (a verdict is not an error).
 * @HEAL_ASK_ANSWERED:    the model answered in text (@answer).
 * @HEAL_ASK_TURN_LIMIT:  @max_turns model turns all asked for tools.
 * @HEAL_ASK_BUDGET:      the model's budget ran out.
 * @HEAL_ASK_MODEL_ERROR: the model could not be asked (@message says why).
 * @HEAL_ASK_CANCELED:    the runner was canceled (heal_runner_cancel()).
 */
typedef enum heal_ask_verdict {
        HEAL_ASK_ANSWERED,
        HEAL_ASK_TURN_LIMIT,
        HEAL_ASK_BUDGET,
        HEAL_ASK_MODEL_ERROR,
        HEAL_ASK_CANCELED,
} heal_ask_verdict;

/**
 * struct heal_ask_opts - A conversation's inputs; every pointer borrowed for the call.
 * @llm:            the model client; required.
 * @model:          the model name for requests; required.
 * @runner:         runs each call; required (heal_runner_cancel() on it ends the conversation).
 * @question:       the user's question; required.
 * @system:         the system prompt, or NULL for heal's (use run_code to compute or check
 *                  what an answer depends on, then answer in text).
 * @max_turns:      model turns at most (0: 8); each may make several tool calls.
 * @max_timeout_ms: the most a call may ask for as timeout_ms, and its default (0: 10000).
 * @limits:         the other limits of each run (0 fields: the drivers' defaults); its
 *                  @wall_ms is ignored (@max_timeout_ms and the call's timeout_ms decide).
 * @compile_limits: limits of each build (0 fields: the drivers' defaults).
 * @share_net:      runs may use the host's network (default: loopback only).
 * @temperature, @max_tokens: as heal_llm_request.
 * @on_event:       progress, called on the calling thread; may be NULL.
 * @userdata:       passed to @on_event.
 */
typedef struct heal_ask_opts {
        heal_llm_client *llm;
        const char *model;
        heal_runner *runner;
        const char *question;
        const char *system;
        unsigned max_turns;
        uint64_t max_timeout_ms;
        heal_runner_limits limits;
        heal_runner_limits compile_limits;
        bool share_net;
        double temperature;
        unsigned max_tokens;
        void (*on_event)(heal_ask_event ev, const heal_ask_call *call, void *userdata);
        void *userdata;
} heal_ask_opts;

#define HEAL_ASK_OPTS_INIT \
 {                         \
  .temperature = -1.0,     \
 }

/**
 * struct heal_ask_result - What heal_ask_run() did; release with heal_ask_result_release().
 * @verdict: how it ended.
 * @answer:  the model's final text (HEAL_ASK_ANSWERED), else the last text it wrote, or NULL;
 *           owned.
 * @calls:   every tool call in order, @n_calls of them; owned.
 * @turns:   model turns asked.
 * @message: one line when not answered ("" otherwise).
 * @tally:   what the model cost (heal_llm_client_tally() at the end).
 */
typedef struct heal_ask_result {
        heal_ask_verdict verdict;
        char *answer;
        heal_ask_call *calls;
        size_t n_calls;
        unsigned turns;
        char message[HEAL_ERROR_MSG_MAX];
        heal_llm_tally tally;
} heal_ask_result;

/**
 * heal_ask_run() - Hold a tool-calling conversation about @o->question.
 * @ret: filled on success, whatever the verdict; release with heal_ask_result_release().
 *       Untouched on failure.
 * @o:   the inputs.
 * @err: optional.
 *
 * Each turn sends the whole conversation with the run_code tool; the calls of a turn run one
 * after another, each in its own sandbox, and each gets its tool message (the result, or an
 * error saying what was wrong with the call: an unknown tool, arguments that are not a JSON
 * object, a missing or ill-typed field, an unknown language), so that a model can correct
 * itself; an error is never a reason to stop. The tool-message protocol is the provider's
 * (OpenAI tool_calls and role "tool"; Anthropic tool_use and tool_result blocks).
 *
 * Context: blocking (model calls and runs); forks; not thread-safe per client or runner.
 * Return: 0 whatever the verdict; -EINVAL for missing options; -ENOMEM.
 * See: https://platform.openai.com/docs/guides/function-calling,
 *      https://docs.anthropic.com/en/docs/build-with-claude/tool-use
 */
int heal_ask_run(heal_ask_result *ret, const heal_ask_opts *o, heal_error *err);

/** heal_ask_result_release() - Free what @r owns and zero it; accepts a zeroed result. */
void heal_ask_result_release(heal_ask_result *r);

/** heal_ask_verdict_name() - "answered", "turn_limit", "budget", "model_error", "canceled";
 * "?" when out of range. */
const char *heal_ask_verdict_name(heal_ask_verdict v);

#endif
