#!/usr/bin/env python3
"""A scripted model for heal's exec provider (docs/llm.md): reads a Chat Completions request on
stdin and answers from a script, so the repair search can be tested and cassettes recorded
without a network.

usage: HEAL_MODEL=exec:fake HEAL_LLM_COMMAND='fake-model.py SCRIPT.json' heal -- CMD

SCRIPT.json: {"rules": [{"when": ["text", ...], "unless": ["text", ...], "answers": ["...", ...]}]}
The first rule whose "when" texts all occur in the request's last user message (and none of
its "unless" texts) answers; the request's n answers are its answers in order (repeated when
there are fewer). No rule matching is an answer with no edit.
"""
import json
import sys


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        script = json.load(f)
    req = json.load(sys.stdin)
    user = ""
    for m in req.get("messages", []):
        if m.get("role") == "user":
            user = m.get("content") or ""
    n = max(1, int(req.get("n") or 1))
    answers = ["I cannot find the cause from what is shown."]
    for rule in script["rules"]:
        if all(w in user for w in rule.get("when", [])) and not any(
            u in user for u in rule.get("unless", [])
        ):
            answers = rule["answers"]
            break
    choices = [
        {"index": i, "message": {"role": "assistant", "content": answers[i % len(answers)]},
         "finish_reason": "stop"}
        for i in range(n)
    ]
    words = len(user.split())
    out = sum(len(c["message"]["content"].split()) for c in choices)
    json.dump({"choices": choices, "usage": {"prompt_tokens": words, "completion_tokens": out}},
              sys.stdout)


if __name__ == "__main__":
    main()
