// mcp-client.mjs drives a semfs MCP server with the official TypeScript SDK
// client and prints what it saw as one JSON object on stdout, for the Go
// tests to check. It asserts nothing itself.
//
// Usage: node mcp-client.mjs PLAN_JSON
//
//   {"transport": "stdio", "command": "/tmp/semfs", "args": ["mcp", ...]}
//   {"transport": "http", "url": "http://127.0.0.1:PORT/mcp", "token": "..."}
//   plus "calls": [{"tool": "read_file", "args": {...}}, ...],
//   optionally "resources": ["semfs:///notes/a.md", ...] to read, and
//   "bench": {"tool": "...", "args": {...}, "n": 500} to time n calls.
//
// Output: {"server": {...}, "tools": [{name, description, inputSchema,
// annotations}], "calls": [{tool, isError, text, structured}],
// "resources": [{uri, error?, text?}], "bench": {n, p50_ms, p99_ms, errors}}
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const plan = JSON.parse(process.argv[2]);

let transport;
if (plan.transport === "stdio") {
  transport = new StdioClientTransport({ command: plan.command, args: plan.args, stderr: "inherit" });
} else if (plan.transport === "http") {
  const headers = plan.token ? { Authorization: `Bearer ${plan.token}` } : {};
  transport = new StreamableHTTPClientTransport(new URL(plan.url), { requestInit: { headers } });
} else {
  throw new Error(`unknown transport ${plan.transport}`);
}

const client = new Client({ name: "semfs-node-test", version: "1.0.0" });
const out = { calls: [], resources: [] };
try {
  await client.connect(transport);
} catch (e) {
  // Report a refused connection (a wrong token) as data, not a crash.
  out.connectError = String(e && e.message ? e.message : e);
  console.log(JSON.stringify(out));
  process.exit(0);
}
out.server = client.getServerVersion();
const listed = await client.listTools();
out.tools = listed.tools.map((t) => ({
  name: t.name,
  description: t.description,
  inputSchema: t.inputSchema,
  annotations: t.annotations ?? null,
}));

for (const c of plan.calls ?? []) {
  try {
    const res = await client.callTool({ name: c.tool, arguments: c.args ?? {} });
    const text = (res.content ?? []).filter((x) => x.type === "text").map((x) => x.text).join("\n");
    out.calls.push({ tool: c.tool, isError: !!res.isError, text, structured: res.structuredContent ?? null });
  } catch (e) {
    // A protocol error (unknown tool, invalid arguments) rather than a tool error.
    out.calls.push({ tool: c.tool, protocolError: String(e && e.message ? e.message : e) });
  }
}

for (const uri of plan.resources ?? []) {
  try {
    const res = await client.readResource({ uri });
    out.resources.push({ uri, text: res.contents.map((c) => c.text ?? "").join("") });
  } catch (e) {
    out.resources.push({ uri, error: String(e && e.message ? e.message : e) });
  }
}

if (plan.bench) {
  const { tool, args, n } = plan.bench;
  const ms = [];
  let errors = 0;
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    const res = await client.callTool({ name: tool, arguments: args });
    ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
    if (res.isError) errors++;
  }
  ms.sort((a, b) => a - b);
  const q = (p) => ms[Math.min(ms.length - 1, Math.floor(p * ms.length))];
  out.bench = { n, p50_ms: q(0.5), p99_ms: q(0.99), errors };
}

await client.close();
console.log(JSON.stringify(out));
