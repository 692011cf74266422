// SPDX-License-Identifier: MIT
// heal mcp driven by the official MCP TypeScript SDK client over stdio, as an agent host
// drives it: initialize, tools/list, every tool called (the SDK checks each structuredContent
// against the tool's outputSchema and throws when it does not match), error results, progress,
// and the cancellation of a long call. Prints TAP; meson counts each test.
//
// usage: node tests/mcp/sdk-client.mjs   (HEAL_BIN: the heal binary; HEAL_TEST_DATA,
//        HEAL_EXAMPLES: tests/data and examples/; node_modules from 'npm ci' in tests/mcp)
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

let Client, StdioClientTransport;
try {
  ({ Client } = await import("@modelcontextprotocol/sdk/client/index.js"));
  ({ StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js"));
} catch (e) {
  console.log("1..1");
  console.log(`not ok 1 - the MCP SDK is not installed: run 'npm ci' in tests/mcp (${e.message})`);
  process.exit(1);
}

const heal = process.env.HEAL_BIN;
const examples = process.env.HEAL_EXAMPLES;
const tests = [];
const test = (name, fn) => tests.push({ name, fn });
const assert = (cond, what) => {
  if (!cond) throw new Error(what);
};

async function connect(root, env = {}, args = []) {
  const transport = new StdioClientTransport({
    command: heal,
    args: ["mcp", "--root", root, ...args],
    env: { ...process.env, ...env },
    stderr: "pipe",
  });
  let log = "";
  transport.stderr?.on("data", (d) => (log += d));
  const client = new Client({ name: "heal-test", version: "1.0.0" });
  await client.connect(transport);
  return { client, transport, log: () => log };
}

const text = (r) => r.content.map((c) => c.text).join("");
const procsWith = (needle) =>
  readdirSync("/proc").filter((p) => {
    if (!/^\d+$/.test(p)) return false;
    try {
      return readFileSync(`/proc/${p}/cmdline`, "latin1").replaceAll("\0", " ").includes(needle);
    } catch {
      return false;
    }
  });

const root = mkdtempSync(join(tmpdir(), "heal-mcp-"));
writeFileSync(join(root, "kept.txt"), "original\n");
const { client, log } = await connect(root);

test("initialize negotiates 2025-11-25 and names the server", async () => {
  const v = client.getServerVersion();
  assert(v.name === "heal", `server ${JSON.stringify(v)}`);
  assert(client.getServerCapabilities().tools, "tools capability");
  assert(client.getInstructions()?.includes("sandbox"), "instructions");
});

test("tools/list: three tools with input and output schemas", async () => {
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name).sort();
  assert(JSON.stringify(names) === '["heal","run_code","run_command"]', `tools ${names}`);
  for (const t of tools) {
    assert(t.inputSchema?.type === "object", `${t.name} inputSchema`);
    assert(t.outputSchema?.type === "object", `${t.name} outputSchema`);
    assert(t.inputSchema.additionalProperties === false, `${t.name}: no other arguments`);
    assert(t.annotations && typeof t.annotations.readOnlyHint === "boolean", `${t.name} hints`);
  }
});

test("run_code: python hello, validated against the output schema", async () => {
  const r = await client.callTool({
    name: "run_code",
    arguments: { language: "python3", code: "print('hello from python')" },
  });
  assert(r.isError === false, `isError ${r.isError}`);
  assert(r.structuredContent.status === "ok", JSON.stringify(r.structuredContent));
  assert(r.structuredContent.run.stdout === "hello from python\n", "stdout");
  assert(r.structuredContent.compile === null, "no compile stage");
  assert(JSON.parse(text(r)).run.stdout === "hello from python\n", "text copy of the JSON");
});

test("run_code: go hello with args and stdin", async () => {
  const code = `package main

import (
	"bufio"
	"fmt"
	"os"
)

func main() {
	s, _ := bufio.NewReader(os.Stdin).ReadString('\\n')
	fmt.Println("go", os.Args[1:], s)
}
`;
  const r = await client.callTool({
    name: "run_code",
    arguments: { language: "go", code, args: ["a b", "$(c)"], stdin: "in\n" },
  });
  assert(r.structuredContent.status === "ok", JSON.stringify(r.structuredContent).slice(0, 2000));
  assert(r.structuredContent.run.stdout === "go [a b $(c)] in\n\n", r.structuredContent.run.stdout);
  assert(r.structuredContent.compile.status === "ok", "compile stage");
});

test("run_code: a compile error is an error result with its document", async () => {
  const r = await client.callTool({
    name: "run_code",
    arguments: { language: "c", code: "int main(void) { return x; }\n" },
  });
  assert(r.isError === true, "isError");
  assert(r.structuredContent.status === "compile_error", r.structuredContent.status);
  assert(/x.? undeclared/.test(r.structuredContent.compile.stderr), r.structuredContent.compile.stderr);
  assert(r.structuredContent.run === null, "no run stage");
});

test("run_code: files, a runtime error and a timeout", async () => {
  let r = await client.callTool({
    name: "run_code",
    arguments: {
      files: [
        { name: "main.py", content: "import util\nutil.fail()\n" },
        { name: "util.py", content: "import sys\ndef fail():\n    sys.exit(3)\n" },
      ],
    },
  });
  assert(r.isError && r.structuredContent.status === "runtime_error", JSON.stringify(r.structuredContent));
  assert(r.structuredContent.run.exit_code === 3, "exit code 3");
  r = await client.callTool({
    name: "run_code",
    arguments: { language: "sh", code: "while :; do :; done", timeout_ms: 300 },
  });
  assert(r.isError && r.structuredContent.status === "timeout", r.structuredContent.status);
});

test("run_code: bad arguments are a tool error naming the field", async () => {
  const r = await client.callTool({ name: "run_code", arguments: { language: "go" } });
  assert(r.isError === true, "isError");
  assert(r.structuredContent === undefined, "no document");
  assert(text(r).includes("'code' is missing"), text(r));
});

test("an unknown tool is a protocol error", async () => {
  let threw = false;
  try {
    await client.callTool({ name: "no_such_tool", arguments: {} });
  } catch (e) {
    threw = e.code === -32602 && e.message.includes("Unknown tool");
  }
  assert(threw, "-32602 Unknown tool");
});

test("run_command: an overlay of the directory; nothing written stays", async () => {
  const r = await client.callTool({
    name: "run_command",
    arguments: { argv: ["sh", "-c", "cat kept.txt; echo new > kept.txt; echo made > new.txt; cat kept.txt new.txt"] },
  });
  assert(r.isError === false, text(r));
  assert(r.structuredContent.stdout === "original\nnew\nmade\n", r.structuredContent.stdout);
  assert(readFileSync(join(root, "kept.txt"), "utf8") === "original\n", "kept.txt unchanged");
  assert(!existsSync(join(root, "new.txt")), "new.txt did not reach the host");
});

test("run_command: a failing command and a directory outside the root", async () => {
  let r = await client.callTool({ name: "run_command", arguments: { argv: ["sh", "-c", "exit 7"] } });
  assert(r.isError && r.structuredContent.exit_code === 7, JSON.stringify(r.structuredContent));
  r = await client.callTool({ name: "run_command", arguments: { argv: ["true"], directory: ".." } });
  assert(r.isError && text(r).includes("leads out of"), text(r));
});

test("progress notifications while a call runs", async () => {
  const seen = [];
  const r = await client.callTool(
    { name: "run_code", arguments: { language: "python3", code: "import time\ntime.sleep(2.5)\nprint('slept')" } },
    undefined,
    { onprogress: (p) => seen.push(p) },
  );
  assert(r.structuredContent.run.stdout === "slept\n", "the call's own result");
  assert(seen.length >= 1, `progress notifications: ${seen.length}`);
  for (let i = 1; i < seen.length; i++) assert(seen[i].progress > seen[i - 1].progress, "increasing");
  assert(seen.every((p) => p.message === "running"), JSON.stringify(seen));
});

test("cancellation stops a long call and the server goes on", async () => {
  const ac = new AbortController();
  const start = Date.now();
  setTimeout(() => ac.abort(), 700);
  let aborted = false;
  try {
    await client.callTool(
      { name: "run_code", arguments: { language: "sh", code: "sleep 987654", timeout_ms: 60000 } },
      undefined,
      { signal: ac.signal },
    );
  } catch (e) {
    aborted = true;
  }
  assert(aborted, "the call was aborted");
  // the sandbox is gone soon after the cancellation, not at its 60 s limit
  let left = procsWith("sleep 987654");
  for (let i = 0; i < 50 && left.length; i++) {
    await new Promise((res) => setTimeout(res, 100));
    left = procsWith("sleep 987654");
  }
  assert(left.length === 0, `processes left: ${left}`);
  assert(Date.now() - start < 15000, "ended well before its time limit");
  await client.ping();
  const r = await client.callTool({ name: "run_code", arguments: { language: "sh", code: "echo after" } });
  assert(r.structuredContent.run.stdout === "after\n", "a call after the cancellation");
  assert(log().includes("canceled"), `the server logged the cancellation: ${log()}`);
});

test("calls in parallel are answered each with its own result", async () => {
  const calls = [1, 2, 3, 4, 5].map((i) =>
    client.callTool({ name: "run_code", arguments: { language: "sh", code: `sleep 0.2; echo ${i}` } }),
  );
  const out = (await Promise.all(calls)).map((r) => r.structuredContent.run.stdout);
  assert(JSON.stringify(out) === '["1\\n","2\\n","3\\n","4\\n","5\\n"]', JSON.stringify(out));
});

test("heal: a failing test repaired as a dry run, then written", async () => {
  const proj = mkdtempSync(join(tmpdir(), "heal-mcp-proj-"));
  cpSync(join(examples, "nil-map"), proj, { recursive: true });
  const before = readFileSync(join(proj, "tally.go"), "utf8");
  const env = {
    HEAL_MODEL: "replay:fake",
    HEAL_CASSETTE: join(examples, "cassettes", "nil-map.jsonl"),
  };
  const c = await connect(proj, env);
  try {
    let r = await c.client.callTool({ name: "heal", arguments: { command: ["go", "test", "./..."] } }, undefined, {
      timeout: 240000,
    });
    assert(r.isError === false, text(r).slice(0, 3000));
    assert(r.structuredContent.verdict === "fixed", r.structuredContent.verdict);
    assert(r.structuredContent.patch.includes("tally.go"), r.structuredContent.patch);
    assert(r.structuredContent.written === null, "a dry run writes nothing");
    assert(readFileSync(join(proj, "tally.go"), "utf8") === before, "tally.go unchanged");
    r = await c.client.callTool(
      { name: "heal", arguments: { command: ["go", "test", "./..."], write: true } },
      undefined,
      { timeout: 240000 },
    );
    assert(r.structuredContent.verdict === "fixed" && r.structuredContent.written, JSON.stringify(r.structuredContent).slice(0, 2000));
    assert(readFileSync(join(proj, "tally.go"), "utf8") !== before, "tally.go fixed");
    r = await c.client.callTool({ name: "heal", arguments: { command: ["go", "test", "./..."] } }, undefined, {
      timeout: 240000,
    });
    assert(r.structuredContent.verdict === "passed" && r.structuredContent.exit_code === 0, JSON.stringify(r.structuredContent).slice(0, 2000));
  } finally {
    await c.client.close();
    rmSync(proj, { recursive: true, force: true });
  }
});

test("heal: a command that cannot be repaired is an error result", async () => {
  const proj = mkdtempSync(join(tmpdir(), "heal-mcp-proj-"));
  const c = await connect(proj, { HEAL_MODEL: "", OPENAI_API_KEY: "", ANTHROPIC_API_KEY: "" });
  try {
    const r = await c.client.callTool({ name: "heal", arguments: { command: ["sh", "-c", "exit 1"] } });
    assert(r.isError === true, "isError");
    assert(typeof r.structuredContent.exit_code === "number" && r.structuredContent.exit_code !== 0, JSON.stringify(r.structuredContent));
  } finally {
    await c.client.close();
    rmSync(proj, { recursive: true, force: true });
  }
});

console.log(`1..${tests.length}`);
let failed = 0;
for (const [i, t] of tests.entries()) {
  try {
    await t.fn();
    console.log(`ok ${i + 1} - ${t.name}`);
  } catch (e) {
    failed++;
    console.log(`not ok ${i + 1} - ${t.name}`);
    for (const line of String(e.stack || e).split("\n")) console.log(`# ${line}`);
  }
}
await client.close();
rmSync(root, { recursive: true, force: true });
process.exit(failed ? 1 : 0);
