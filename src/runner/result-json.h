/* SPDX-License-Identifier: MIT */
#ifndef HEAL_RUNNER_RESULT_JSON_H
#define HEAL_RUNNER_RESULT_JSON_H

#include <jansson.h>

#include "heal/runner.h"
#include "heal/sandbox.h"

/* heal run's document (docs/json.md); NULL only when out of memory. */
json_t *sandbox_result_json(const heal_sandbox_result *res);

/* heal exec's document (docs/exec.md), Piston-shaped stages; NULL only when out of memory. */
json_t *runner_result_json(const heal_runner_result *res);

#endif
