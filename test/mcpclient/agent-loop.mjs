// A whole agent loop against `moat mcp` over stdio, driven by the
// TypeScript SDK's own client (@modelcontextprotocol/sdk, from npm): list
// the tools, then call each one as an agent would. Exits 1 on any failed
// check and prints one line per check, then "N passed, N failed".
//
// Usage: node agent-loop.mjs MOAT_BINARY [moat mcp args...]
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [moat, ...args] = process.argv.slice(2);
if (!moat) {
  console.error("usage: node agent-loop.mjs MOAT_BINARY [args...]");
  process.exit(2);
}

let passed = 0, failed = 0;
function check(name, ok, detail) {
  if (ok) { passed++; console.log(`ok   ${name}`); }
  else { failed++; console.log(`FAIL ${name}: ${detail === undefined ? "" : JSON.stringify(detail).slice(0, 2000)}`); }
}

const transport = new StdioClientTransport({ command: moat, args: ["mcp", ...args], stderr: "inherit" });
const client = new Client({ name: "moat-agent-loop", version: "1.0.0" });
await client.connect(transport);

const called = new Set();
async function tool(name, a = {}) {
  called.add(name);
  const r = await client.callTool({ name, arguments: a });
  return r;
}
async function okTool(name, a = {}) {
  const r = await tool(name, a);
  check(`${name} ${JSON.stringify(a).slice(0, 80)}`, !r.isError, r.content);
  return r.structuredContent ?? {};
}
const sleep = (ms) => new Promise((res) => setTimeout(res, ms));

try {
  // The tools, each described with what the policy allows.
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name).sort();
  const want = ["get_report", "list_files", "list_processes", "list_refusals", "read_file", "read_process_output",
    "run_command", "run_python", "session_info", "signal_process", "start_process", "stat_file", "stop_process", "write_file"];
  check("tools listed", JSON.stringify(names) === JSON.stringify(want), names);
  check("every description says the policy", tools.every((t) => t.description.includes("The sandbox's policy")), tools.map((t) => t.name));
  const forbidden = ["apply_workspace", "restore_quarantine", "set_policy", "narrow_policy", "widen_policy"];
  check("no forbidden tool", !names.some((n) => forbidden.includes(n) || /policy|quarantine|workspace/.test(n)), names);

  const info = await okTool("session_info");
  check("session_info names the policy", info.session?.policy === "default", info);

  // Write a module and its test, and run them.
  await okTool("write_file", { path: "mathx.py", content: "def add(a, b):\n    return a + b\n" });
  await okTool("write_file", { path: "test_mathx.py", content:
    "import unittest\nfrom mathx import add\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n\nif __name__ == '__main__':\n    unittest.main()\n" });
  const t = await okTool("run_command", { argv: ["python3", "-m", "unittest", "-v", "test_mathx"] });
  check("the module's test passes", t.exit_code === 0 && /OK/.test(t.stderr?.text ?? ""), t);
  const rf = await okTool("read_file", { path: "mathx.py" });
  check("read_file reads the module", rf.content?.text?.includes("def add"), rf);
  const ls = await okTool("list_files", { path: "." });
  check("list_files lists both", ["mathx.py", "test_mathx.py"].every((n) => ls.entries?.some((e) => e.name === n)), ls);
  const st = await okTool("stat_file", { path: "test_mathx.py" });
  check("stat_file says file", st.type === "file" && st.size > 0, st);

  // Start a loopback server in the background and query it.
  const port = 18000 + Math.floor(Math.random() * 2000);
  const srv = await okTool("start_process", { argv: ["python3", "-m", "http.server", String(port), "--bind", "127.0.0.1"] });
  let body = "";
  for (let i = 0; i < 100 && !body.includes("mathx.py"); i++) {
    const q = await tool("run_command", { argv: ["python3", "-c",
      `import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:${port}/').read().decode())`] });
    body = q.structuredContent?.stdout?.text ?? "";
    if (!body.includes("mathx.py")) await sleep(100);
  }
  check("the background server answers", body.includes("mathx.py"), body);
  const out = await okTool("read_process_output", { id: srv.id });
  check("the server's log shows the request", /GET \//.test(out.stderr?.data?.text ?? ""), out);
  const lp = await okTool("list_processes");
  check("list_processes lists it", lp.processes?.some((p) => p.id === srv.id && p.state === "running"), lp);

  // Signal a process and read what it did.
  const w = await okTool("start_process", { argv: ["sh", "-c", "trap 'echo got-hup' HUP; echo ready; while :; do sleep 0.1; done"] });
  let seen = "", next = 0;
  for (let i = 0; i < 100 && !seen.includes("ready"); i++) {
    const o = await okTool("read_process_output", { id: w.id, stdout_from: next });
    seen += o.stdout?.data?.text ?? ""; next = o.stdout?.next ?? next;
    if (!seen.includes("ready")) await sleep(50);
  }
  await okTool("signal_process", { id: w.id, signal: "HUP" });
  for (let i = 0; i < 100 && !seen.includes("got-hup"); i++) {
    const o = await okTool("read_process_output", { id: w.id, stdout_from: next });
    seen += o.stdout?.data?.text ?? ""; next = o.stdout?.next ?? next;
    if (!seen.includes("got-hup")) await sleep(50);
  }
  check("the signal arrived", seen.includes("got-hup"), seen);
  for (const id of [w.id, srv.id]) {
    const s = await okTool("stop_process", { id });
    check(`stop_process ${id}`, s.state === "exited", s);
  }

  // Meet a refusal and read it back.
  const r = await okTool("run_command", { argv: ["python3", "-c", "import urllib.request; urllib.request.urlopen('https://pypi.org/simple/', timeout=5)"] });
  check("the network call fails", r.exit_code !== 0, r);
  check("the run names its refusal", r.refusals?.some((x) => x.subject === "pypi.org" && x.setting === "network.allow-domain"), r.refusals);
  const lr = await okTool("list_refusals");
  check("list_refusals reads it back, with advice from the setting",
    lr.refusals?.some((x) => x.subject === "pypi.org" && x.advice.includes("network.allow-domain") && !x.advice.includes("pypi.org")), lr);
  const rep = await okTool("get_report");
  check("get_report carries it", rep.version === 1 && rep.refusals?.some((x) => x.subject === "pypi.org"), rep.refusals);

  // A persistent interpreter.
  await okTool("run_python", { code: "import mathx\ntotal = mathx.add(40, 1)" });
  const py = await okTool("run_python", { code: "total + 1" });
  check("run_python keeps variables", py.value === "42", py);

  // A failure is an IsError result the model can act on.
  const e = await tool("read_file", { path: "no-such-file.txt" });
  check("a missing file is an IsError result", e.isError === true && e.structuredContent?.error?.code === "not_found", e.structuredContent);

  const missing = want.filter((n) => !called.has(n));
  check("every tool was called", missing.length === 0, missing);
} catch (err) {
  check("no exception", false, String(err?.stack ?? err));
} finally {
  await client.close();
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
