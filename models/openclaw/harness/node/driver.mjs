// Drives the real OpenClaw Agent Core through scripted scenarios and records what it does.
//
// Usage: node driver.mjs --package-dir DIR --scenarios FILE
// FILE holds a JSON array of scenarios; one JSON line per scenario is written to stdout:
//   {"name", "records": [...], "unperformed": n, "error": null | "..."}
//
// A scenario fixes the layer ("session" or "agent"), the knobs (toolExecution, steeringMode,
// followUpMode, calls, toolTurns, blockedCall, followUps, stopAfterTurn) and a plan of actions ("steer"
// or "abort"), each to be performed right after the n-th occurrence of an observed point (an agent
// event, a model request, a tool implementation start, a steering or follow-up poll). Every agent
// event, every model request and every poll is recorded, in order, and last what the steering and
// follow-up queues hold once the Agent is idle. The model is a scripted fake. Tools resolve at once,
// or with finishOrder "reverse" in a parallel batch, one at a time, the last launched first: each is
// held until the batch has launched (every launch is synchronous) and released from a macrotask once
// everything the previous release set off has run, so a scenario always runs the same way.
//
// Layers. "agent" is the bare public Agent: one prompt(), then waitForIdle(). "session" adds what the
// embedded runner's AgentSession does around it, which the package does not export, restated here
// with the public Agent methods it calls (2026.8.1-beta.3 dist/sessions-*.js and 2026.9.6
// dist/resource-loader-*.mjs, AgentSession.runAgentPrompt / handlePostAgentRun; the admission gate is
// prepareEmbeddedAttemptStream's canInject in dist/builtin-openclaw-*):
//   - steering admission: a steer is refused ("active session is finalizing") once the run is aborted
//     or the session's prompt has finished;
//   - post-run loop: after each run, unless its last assistant message was aborted, call
//     agent.continue() while agent.hasQueuedMessages().
//
// Seams that are not public: Agent.steeringQueue/followUpQueue.drain are wrapped to record each poll
// (OpenClaw's own tests do the same), and with stopAfterTurn Agent.createLoopConfig is wrapped to add
// shouldStopAfterTurn, which publicly only runAgentLoop's config accepts.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

function parseArgs(argv) {
  const args = {};
  for (let i = 0; i < argv.length; i += 2) args[argv[i].replace(/^--/, "")] = argv[i + 1];
  if (!args["package-dir"] || !args.scenarios) throw new Error("usage: driver.mjs --package-dir DIR --scenarios FILE");
  return args;
}

async function loadAgentCore(packageDir) {
  const manifest = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8"));
  const entry = manifest.exports?.["./plugin-sdk/agent-core"];
  const target = typeof entry === "string" ? entry : entry?.import ?? entry?.default;
  if (!target) throw new Error(`${packageDir} does not export ./plugin-sdk/agent-core`);
  return import(pathToFileURL(join(packageDir, target)).href);
}

const MODEL = {
  id: "scripted", name: "scripted", api: "openai-completions", provider: "scripted", baseUrl: "",
  reasoning: false, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 100000, maxTokens: 1000,
};
const USAGE = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };

function textOf(content) {
  if (typeof content === "string") return content;
  return (content ?? []).filter((part) => part.type === "text").map((part) => part.text).join("");
}

function userMessage(text) {
  return { role: "user", content: [{ type: "text", text }], timestamp: 1 };
}

// A projection of an agent event without timestamps or generated ids.
function project(event) {
  const out = { ev: "agent", type: event.type };
  if (event.message) {
    const m = event.message;
    out.role = m.role;
    out.text = textOf(m.content);
    if (m.role === "assistant") {
      out.stopReason = m.stopReason;
      out.toolCalls = (m.content ?? []).filter((c) => c.type === "toolCall").map((c) => c.id);
    }
    if (m.role === "toolResult") {
      out.toolCallId = m.toolCallId;
      out.details = m.details ?? {};
      out.isError = m.isError;
    }
    if (m.role === "custom") out.customType = m.customType;
  }
  if (event.type.startsWith("tool_execution_")) {
    out.toolCallId = event.toolCallId;
    if (event.type === "tool_execution_end") {
      out.text = textOf(event.result?.content);
      out.details = event.result?.details ?? {};
      out.isError = event.isError;
      out.executionStarted = event.executionStarted;
    }
  }
  if (event.type === "turn_end") out.toolResults = (event.toolResults ?? []).map((m) => m.toolCallId);
  return out;
}

// The key by which a plan names an observed point: its kind plus the field that tells points apart.
function pointKey(record) {
  if (record.ev === "agent") {
    const detail = record.type.startsWith("message_") ? record.toolCallId ?? record.role : record.toolCallId ?? "";
    return `${record.type}:${detail}`;
  }
  if (record.ev === "tool_execute") return `tool_execute:${record.toolCallId}`;
  return record.ev;
}

async function runScenario(core, scenario) {
  const records = [];
  const seen = new Map();
  const plan = scenario.plan.map((step) => ({ ...step, done: false }));
  let agent;
  let requests = 0;
  const session = scenario.layer === "session";
  let accepting = true;
  let aborted = false;
  let lastAssistant;

  // Record one observed point, then perform every planned action that waits for it.
  const observe = (record) => {
    records.push(record);
    const key = pointKey(record);
    const count = (seen.get(key) ?? 0) + 1;
    seen.set(key, count);
    for (const step of plan) {
      if (step.done || step.after[0] !== key || step.after[1] !== count) continue;
      if (plan.some((earlier) => earlier !== step && !earlier.done && plan.indexOf(earlier) < plan.indexOf(step))) continue;
      step.done = true;
      if (step.action === "steer" && session && (!accepting || aborted)) {
        records.push({ ev: "steer_refused", id: step.id, reason: "finalizing" });
      } else if (step.action === "steer") {
        records.push({ ev: "steer", id: step.id });
        agent.steer(userMessage(step.id));
      } else {
        records.push({ ev: "abort" });
        aborted = true;
        agent.abort();
      }
    }
  };

  const streamFn = (_model, context, options) => {
    requests += 1;
    const users = context.messages.filter((m) => m.role === "user").map((m) => textOf(m.content));
    observe({ ev: "model_request", llmCall: requests, users });
    const aborted = options?.signal?.aborted;
    const toolTurn = requests <= scenario.toolTurns && scenario.calls > 0 && !aborted;
    const content = toolTurn
      ? Array.from({ length: scenario.calls }, (_, j) => ({ type: "toolCall", id: `c${j}`, name: "tool", arguments: {} }))
      : [{ type: "text", text: aborted ? "" : `answer ${requests}` }];
    const stopReason = aborted ? "aborted" : toolTurn ? "toolUse" : "stop";
    const message = { role: "assistant", content, api: MODEL.api, provider: MODEL.provider, model: MODEL.id,
      usage: USAGE, stopReason, timestamp: 1, ...(aborted ? { errorMessage: "aborted" } : {}) };
    return {
      async *[Symbol.asyncIterator]() { yield { type: "done", reason: stopReason, message }; },
      result: async () => message,
    };
  };

  const held = [];
  const releaseLast = () => {
    held.pop()();
    if (held.length > 0) setImmediate(releaseLast);
  };
  const reverse = scenario.finishOrder === "reverse" && scenario.toolExecution === "parallel";
  const tool = {
    name: "tool", label: "tool", description: "scripted tool",
    parameters: { type: "object", properties: {}, additionalProperties: false },
    execute: async (toolCallId) => {
      observe({ ev: "tool_execute", toolCallId });
      if (reverse) {
        await new Promise((resolve) => {
          held.push(resolve);
          if (held.length === 1) setImmediate(releaseLast);
        });
      }
      return { content: [{ type: "text", text: `${toolCallId} result` }], details: {} };
    },
  };

  agent = new core.Agent({
    initialState: { model: MODEL, tools: [tool] },
    streamFn,
    toolExecution: scenario.toolExecution,
    steeringMode: scenario.steeringMode,
    followUpMode: scenario.followUpMode,
    beforeToolCall: async ({ toolCall }) =>
      toolCall.id === `c${scenario.blockedCall}` ? { block: true, reason: "blocked by policy" } : undefined,
  });
  for (const [queue, ev] of [[agent.steeringQueue, "steering_poll"], [agent.followUpQueue, "follow_up_poll"]]) {
    const drain = queue.drain.bind(queue);
    queue.drain = () => {
      const drained = drain();
      observe({ ev, drained: drained.map((m) => textOf(m.content)) });
      return drained;
    };
  }
  if (scenario.stopAfterTurn) {
    const createLoopConfig = agent.createLoopConfig.bind(agent);
    agent.createLoopConfig = (options) => ({ ...createLoopConfig(options), shouldStopAfterTurn: async () => true });
  }
  agent.subscribe(async (event) => {
    if (event.type === "message_update" || event.type === "tool_execution_update") return;
    if (event.type === "message_end" && event.message.role === "assistant") lastAssistant = event.message;
    observe(project(event));
  });
  for (let n = 1; n <= scenario.followUps; n++) agent.followUp(userMessage(`f${n}`));

  let error = null;
  try {
    observe({ ev: "start" });
    await agent.prompt(userMessage("p0"));
    await agent.waitForIdle();
    while (session) {
      const last = lastAssistant;
      lastAssistant = undefined;
      if (!last || last.stopReason === "aborted" || !agent.hasQueuedMessages()) break;
      observe({ ev: "session_continue" });
      await agent.continue();
      await agent.waitForIdle();
    }
  } catch (broken) {
    error = String(broken?.stack ?? broken);
  } finally {
    accepting = false;
  }
  const texts = (queue) => queue.messages.map((m) => textOf(m.content));
  records.push({ ev: "settled", queued: texts(agent.steeringQueue), followUps: texts(agent.followUpQueue) });
  return { name: scenario.name, records, unperformed: plan.filter((s) => !s.done).length, error };
}

const args = parseArgs(process.argv.slice(2));
const core = await loadAgentCore(args["package-dir"]);
const scenarios = JSON.parse(readFileSync(args.scenarios, "utf8"));
for (const scenario of scenarios) {
  process.stdout.write(`${JSON.stringify(await runScenario(core, scenario))}\n`);
}
