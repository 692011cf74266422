#!/usr/bin/env python3
"""A scripted model for heal's exec provider (docs/llm.md): reads a Chat Completions request on
stdin and answers from a script, so the repair search can be tested and cassettes recorded
without a network.

usage: HEAL_MODEL=exec:fake HEAL_LLM_COMMAND='fake-model.py SCRIPT.json' heal -- CMD

SCRIPT.json: {"rules": [{"when": ["text", ...], "unless": ["text", ...], "answers": ["...", ...]}]}
The first rule whose "when" texts all occur in the request's last user message (and none of
its "unless" texts) answers; the request's n answers are its answers in order (repeated when
there are fewer). No rule matching is an answer with no edit.
A rule may also act, for the tests of what happens meanwhile: "append": {"FILE": "text"} adds
text to a file of the working directory (the user editing the tree during a search);
"interrupt": true sends SIGINT to the nearest ancestor process named heal (Ctrl-C).
"""
import json
import os
import signal
import sys


def interrupt_heal():
    """SIGINT to heal itself: the outermost of the ancestors named heal (the exec provider
    runs this script from a supervisor process heal forked, also named heal)."""
    pid, target = os.getppid(), 0
    while pid > 1:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
            stat = f.read()
        comm = stat[stat.index("(") + 1:stat.rindex(")")]
        if comm == "heal":
            target = pid
        elif target:
            break
        pid = int(stat[stat.rindex(")") + 2:].split()[1])
    if target:
        os.kill(target, signal.SIGINT)


def act(rule):
    for path, text in rule.get("append", {}).items():
        with open(path, "a", encoding="utf-8") as f:
            f.write(text)
    if rule.get("interrupt"):
        interrupt_heal()


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
            act(rule)
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
