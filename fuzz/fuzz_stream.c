/* SPDX-License-Identifier: MIT */
/*
 * The streamed-answer assembler with one provider's event handler (FUZZ_WIRE: llm_openai or
 * llm_anthropic) on arbitrary event streams, fed in pieces whose size comes from the first byte: no
 * crash, no leak, only the documented errors, and a finished stream gives complete strings, each
 * the concatenation of the fragments told to on_delta.
 */
#include <errno.h>
#include <string.h>

#include "heal/llm.h"

#include "core/util.h"
#include "fuzz.h"
#include "llm/llm-internal.h"
#include "llm/stream.h"

#ifndef FUZZ_WIRE
# define FUZZ_WIRE llm_openai
#endif

#define CHOICES_MAX STREAM_CHOICES_MAX

static void on_delta(void *data, unsigned attempt, size_t choice, const char *text, size_t len)
{
        size_t *told = data;

        FUZZ_ASSERT(attempt == 1 && choice < CHOICES_MAX && len > 0 && text);
        told[choice] += len;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        heal_llm_request req = { .on_delta = on_delta };
        size_t told[CHOICES_MAX] = { 0 };
        heal_llm_response resp = { 0 };
        heal_error err = HEAL_ERROR_INIT;
        struct llm_stream *s;
        size_t step;
        int r = 0;

        if (size < 1)
                return 0;
        step = (size_t)(data[0] % 32) + 1;
        data++, size--;
        FUZZ_ASSERT(llm_stream_new(&s, &FUZZ_WIRE, &resp, 1 << 16, &err) == 0);
        req.delta_data = told;
        llm_stream_notify(s, &req, 1, 0);
        for (size_t off = 0; off < size && r == 0; off += step)
                r = llm_stream_feed((const char *)data + off, MIN(step, size - off), s);
        if (r == 0)
                r = llm_stream_finish(s, &err);
        FUZZ_ASSERT(r == 0 || r == -EPROTO || r == -E2BIG || r == -ENOMEM || r == -EAGAIN);
        if (r == 0)
                for (size_t i = 0; i < resp.n_choices; i++) {
                        FUZZ_ASSERT(resp.choices[i].text &&
                                    strlen(resp.choices[i].text) == told[i]);
                        for (size_t j = 0; j < resp.choices[i].n_tool_calls; j++)
                                FUZZ_ASSERT(resp.choices[i].tool_calls[j].id &&
                                            resp.choices[i].tool_calls[j].name &&
                                            resp.choices[i].tool_calls[j].arguments);
                }
        else
                FUZZ_ASSERT(err.msg[0] != '\0');
        llm_stream_free(s);
        heal_llm_response_release(&resp);
        return 0;
}
