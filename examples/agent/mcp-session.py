#!/usr/bin/env python3
"""What an MCP host does with heal mcp, by hand: start it, send one JSON-RPC message per line,
read the answer to each. usage: mcp-session.py HEAL [heal mcp options]"""
import json
import subprocess
import sys

server = subprocess.Popen([sys.argv[1], "mcp", "-q", *sys.argv[2:]], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, text=True)


def ask(msg_id, method, params=None):
    msg = {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params or {}}
    server.stdin.write(json.dumps(msg) + "\n")
    server.stdin.flush()
    return json.loads(server.stdout.readline())["result"]


r = ask(1, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                          "clientInfo": {"name": "demo", "version": "1"}})
print("initialize ->", r["protocolVersion"], r["serverInfo"]["name"])
server.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
print("tools/list ->", [t["name"] for t in ask(2, "tools/list")["tools"]])
code = '#include <stdio.h>\nint main(void) { printf("%d\\n", 6 * 7); return 0; }\n'
r = ask(3, "tools/call", {"name": "run_code", "arguments": {"language": "c", "code": code}})
s = r["structuredContent"]
print("tools/call run_code (c) ->", s["status"], repr(s["run"]["stdout"]), "isError:", r["isError"])
r = ask(4, "tools/call", {"name": "run_command", "arguments": {"argv": ["sh", "-c", "touch new-file; ls"]}})
s = r["structuredContent"]
print("tools/call run_command ->", s["status"], repr(s["stdout"]), "(new-file stays in the sandbox)")
server.stdin.close()
sys.exit(server.wait())
