/* SPDX-License-Identifier: MIT */
/*
 * A response decoder (FUZZ_DECODE: openai_decode or anthropic_decode) and the error-message
 * extractor on arbitrary bodies: no crash, no leak,
 * only the documented errors, and on success every string a caller may read is there.
 */
#include <errno.h>
#include <string.h>

#include "heal/llm.h"

#include "fuzz.h"
#include "llm/llm-internal.h"

#ifndef FUZZ_DECODE
# define FUZZ_DECODE openai_decode
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        heal_llm_response resp = { 0 };
        heal_error err = HEAL_ERROR_INIT;
        char msg[300];
        int r;

        r = FUZZ_DECODE(&resp, (const char *)data, size, &err);
        FUZZ_ASSERT(r == 0 || r == -EPROTO || r == -ENOMEM);
        if (r == 0) {
                FUZZ_ASSERT(resp.n_choices > 0);
                for (size_t i = 0; i < resp.n_choices; i++) {
                        FUZZ_ASSERT(resp.choices[i].text != NULL);
                        for (size_t j = 0; j < resp.choices[i].n_tool_calls; j++)
                                FUZZ_ASSERT(resp.choices[i].tool_calls[j].name &&
                                            resp.choices[i].tool_calls[j].arguments);
                }
        } else {
                FUZZ_ASSERT(err.msg[0] != '\0');
        }
        heal_llm_response_release(&resp);
        llm_error_message(msg, sizeof(msg), (const char *)data, size);
        FUZZ_ASSERT(strlen(msg) < sizeof(msg));
        return 0;
}
