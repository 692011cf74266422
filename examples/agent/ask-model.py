#!/usr/bin/env python3
"""A scripted model that calls heal's run_code tool, for the demo of heal ask (the exec
provider, docs/llm.md): it reads the Chat Completions request on stdin and answers with a tool
call until it has a result to answer from. scripts/record-cassettes records its answers."""
import json
import sys

req = json.load(sys.stdin)
results = [json.loads(m["content"]) for m in req["messages"] if m["role"] == "tool"]
if not results:
    code = "primes = [n for n in range(2, 600) if all(n % d for d in range(2, int(n ** 0.5) + 1))]\nprint(sum(primes[:100]))\n"
    call = {"id": "call_1", "type": "function",
            "function": {"name": "run_code", "arguments": json.dumps({"language": "python3", "code": code})}}
    msg = {"role": "assistant", "content": "I will compute it.", "tool_calls": [call]}
    reason = "tool_calls"
else:
    msg = {"role": "assistant", "content": "The sum of the first 100 primes is %s." % results[-1]["stdout"].strip()}
    reason = "stop"
print(json.dumps({"choices": [{"index": 0, "message": msg, "finish_reason": reason}],
                  "usage": {"prompt_tokens": 0, "completion_tokens": 0}}))
