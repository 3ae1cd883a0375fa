// OpenClaw: in parallel tool execution, a steer accepted while the batch's calls run does not outrank
// shouldStopAfterTurn.
//
// Standalone: only the public export `openclaw/plugin-sdk/agent-core` (runAgentLoop) of the build named
// by --package-dir; a scripted model and tools, steering through the public async getSteeringMessages
// getter, no timers, no network.
//
// Contract: steering outranks shouldStopAfterTurn for steers accepted during the tool batch. The
// sequential executor keeps it with Checkpoint C, whose comment reads "A steer accepted during the
// final call's awaited preflight or execution must outrank shouldStopAfterTurn even when there is no
// remaining tail". The parallel executor polls steering once, at its launch checkpoint, and nothing
// after it, so the turn boundary consults shouldStopAfterTurn first and the run ends with the steer
// still queued.
//
// Setup: a batch [c0, c1] whose last call c1 steers S from inside its execution; shouldStopAfterTurn
// answers true. Run once with toolExecution "sequential" (the documented guarantee) and once with
// "parallel".
//
// Usage: node parallel-steer-does-not-outrank-stop.mjs --package-dir node_modules/openclaw
// Exit 1: sequential delivers S before stopping and parallel stops without it (reproduced).
// Exit 0: both deliver it. Exit 2: bad usage, or the sequential guarantee does not hold either.

import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const at = process.argv.indexOf("--package-dir");
const packageDir = at > 0 ? process.argv[at + 1] : undefined;
if (!packageDir || !existsSync(join(packageDir, "package.json"))) {
  console.error("usage: node parallel-steer-does-not-outrank-stop.mjs --package-dir DIR (an installed openclaw package)");
  process.exit(2);
}
const manifest = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8"));
const entry = manifest.exports?.["./plugin-sdk/agent-core"];
const { runAgentLoop } = await import(pathToFileURL(join(packageDir, entry?.default ?? entry)).href);

const MODEL = { id: "scripted", name: "scripted", api: "openai-completions", provider: "scripted", baseUrl: "",
  reasoning: false, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 100000, maxTokens: 1000 };
const USAGE = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
const text = (m) => (typeof m.content === "string" ? m.content : m.content.map((c) => c.text ?? "").join(""));
const user = (t) => ({ role: "user", content: [{ type: "text", text: t }], timestamp: 1 });

async function run(toolExecution) {
  const requests = [];
  const steering = [];
  const streamFn = (_model, context) => {
    requests.push(context.messages.filter((m) => m.role === "user").map(text));
    const tools = requests.length === 1;
    const content = tools ? ["c0", "c1"].map((id) => ({ type: "toolCall", id, name: "tool", arguments: {} }))
      : [{ type: "text", text: "ok" }];
    const message = { role: "assistant", content, api: MODEL.api, provider: MODEL.provider, model: MODEL.id,
      usage: USAGE, stopReason: tools ? "toolUse" : "stop", timestamp: 1 };
    return { async *[Symbol.asyncIterator]() { yield { type: "done", reason: message.stopReason, message }; },
      result: async () => message };
  };
  const tool = { name: "tool", label: "tool", description: "scripted", parameters: { type: "object", properties: {} },
    execute: async (id) => {
      if (id === "c1") steering.push(user("S"));
      return { content: [{ type: "text", text: `${id} result` }], details: {} };
    } };
  const config = { model: MODEL, convertToLlm: (messages) => messages, toolExecution,
    getSteeringMessages: async () => steering.splice(0), shouldStopAfterTurn: async () => true };
  await runAgentLoop([user("P0")], { systemPrompt: "", messages: [], tools: [tool] }, config, async () => {},
    undefined, streamFn);
  return { delivered: requests.some((users) => users.includes("S")), stillQueued: steering.length, requests };
}

const sequential = await run("sequential");
const parallel = await run("parallel");
console.log(`openclaw@${manifest.version}: sequential ${JSON.stringify(sequential)}`);
console.log(`openclaw@${manifest.version}: parallel   ${JSON.stringify(parallel)}`);
if (!sequential.delivered) {
  console.error("the sequential guarantee does not hold either; this script checks only the parallel difference");
  process.exit(2);
}
if (parallel.delivered) {
  console.log("not reproduced: the steer outranks shouldStopAfterTurn in both modes");
  process.exit(0);
}
console.log("reproduced: parallel ended the run on shouldStopAfterTurn with the steer still queued");
process.exit(1);
