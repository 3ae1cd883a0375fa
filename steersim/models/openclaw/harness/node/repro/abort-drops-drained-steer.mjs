// OpenClaw: a steer drained at a tool checkpoint is lost when the run aborts before injecting it.
//
// Standalone: only the public export `openclaw/plugin-sdk/agent-core` (Agent) of the build named by
// --package-dir; a scripted model and tool, no timers, no network.
//
// Contract at the layer users meet: a message Agent.steer() accepted reaches the model, in this run or,
// when the run is aborted first, after the next prompt (queued steering is kept and drained by the next
// run's start checkpoint; the embedded runner's session refuses new steers once a run is aborted).
//
// Setup: a sequential batch [c0, c1]. While c0 runs, agent.steer(S). Checkpoint A of c1 drains S (c1 is
// skipped), and a turn_end listener aborts the run, so stopIfAborted ends it before S is appended. Then
// the session's next prompt, P1.
//
// Usage: node abort-drops-drained-steer.mjs --package-dir node_modules/openclaw
// Exit 1: S never reaches the model (reproduced). Exit 0: S reaches it. Exit 2: bad usage or setup.

import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const at = process.argv.indexOf("--package-dir");
const packageDir = at > 0 ? process.argv[at + 1] : undefined;
if (!packageDir || !existsSync(join(packageDir, "package.json"))) {
  console.error("usage: node abort-drops-drained-steer.mjs --package-dir DIR (an installed openclaw package)");
  process.exit(2);
}
const manifest = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8"));
const entry = manifest.exports?.["./plugin-sdk/agent-core"];
const { Agent } = await import(pathToFileURL(join(packageDir, entry?.default ?? entry)).href);

const MODEL = { id: "scripted", name: "scripted", api: "openai-completions", provider: "scripted", baseUrl: "",
  reasoning: false, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 100000, maxTokens: 1000 };
const USAGE = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
const text = (m) => (typeof m.content === "string" ? m.content : m.content.map((c) => c.text ?? "").join(""))
  .replace(/^<turn_aborted>[^]*/, "<turn_aborted>");
const user = (t) => ({ role: "user", content: [{ type: "text", text: t }], timestamp: 1 });

const requests = [];
const streamFn = (_model, context, options) => {
  requests.push(context.messages.filter((m) => m.role === "user").map(text));
  const tools = requests.length === 1;
  const stopReason = options?.signal?.aborted ? "aborted" : tools ? "toolUse" : "stop";
  const content = tools ? ["c0", "c1"].map((id) => ({ type: "toolCall", id, name: "tool", arguments: {} }))
    : [{ type: "text", text: "ok" }];
  const message = { role: "assistant", content, api: MODEL.api, provider: MODEL.provider, model: MODEL.id,
    usage: USAGE, stopReason, timestamp: 1 };
  return { async *[Symbol.asyncIterator]() { yield { type: "done", reason: stopReason, message }; },
    result: async () => message };
};
let agent;
const tool = { name: "tool", label: "tool", description: "scripted", parameters: { type: "object", properties: {} },
  execute: async (id) => {
    if (id === "c0") agent.steer(user("S"));
    return { content: [{ type: "text", text: `${id} result` }], details: {} };
  } };
agent = new Agent({ initialState: { model: MODEL, tools: [tool] }, streamFn, toolExecution: "sequential" });
let skipped = false;
agent.subscribe(async (event) => {
  if (event.type === "tool_execution_end" && event.toolCallId === "c1") skipped = !event.executionStarted;
  if (event.type === "turn_end" && skipped && !agent.signal?.aborted) agent.abort();
});

await agent.prompt(user("P0"));
await agent.waitForIdle();
const queuedAfterAbort = agent.hasQueuedMessages();
await agent.prompt(user("P1"));
await agent.waitForIdle();

const reached = requests.some((users) => users.includes("S"));
console.log(`openclaw@${manifest.version}: c1 skipped by the steer: ${skipped}; ` +
  `queued after the abort: ${queuedAfterAbort}; model requests: ${JSON.stringify(requests)}`);
if (!skipped) {
  console.error("setup did not hold: the steer was not drained at c1's checkpoint");
  process.exit(2);
}
if (reached) {
  console.log("not reproduced: the steer reached the model");
  process.exit(0);
}
console.log("reproduced: the steer was drained (c1 skipped for it), the run aborted, and it never reached the model");
process.exit(1);
