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
// follow-up queues hold once the Agent is idle. The model is a scripted fake. Tools take time: each is
// held across macrotasks until the batch has launched (every launch only awaits microtasks) and then
// released one at a time, in launch order (or with finishOrder "reverse" in a parallel batch, the last
// launched first), each from a macrotask once everything the previous release set off has run, so a
// steer or abort placed while a tool runs lands while it runs, and a scenario always runs the same way.
//
// Layers. "agent" is the bare public Agent: one prompt(), then waitForIdle(). "session" is OpenClaw's
// own AgentSession, the class the embedded runner drives, built by its own factory createAgentSession
// with in-memory auth, model registry, settings and session transcript (no gateway, config file or
// network). The package does not export either: they are imported from private dist modules of the
// installed build, by the paths in SESSION_MODULES below (pinned, with the build, by the lock file),
// and looked up there by their function names. The real code then runs
//   - AgentSession.prompt -> runAgentPrompt: after each run, handlePostAgentRun returns "continue"
//     while agent.hasQueuedMessages() (unless the last assistant message was aborted), and the session
//     calls agent.continue();
//   - AgentSession.queueSteer(text): the session records the steer and calls agent.steer. Its caller
//     AgentSession.steer(text, ..., canInject) first awaits the message's transcript recorder and then
//     rechecks canInject; the driver calls queueSteer itself so that the steer lands at the planned
//     point. The await only separates a steer from an abort sent in the same microtask, which the
//     gateway never does (each inbound message is its own task); a plan's abort comes after its steer;
//   - AgentSession.abort(): agent.abort() then waitForIdle().
// What stays a stand-in is the canInject predicate itself: the embedded runner builds it inside
// runEmbeddedAttempt's queue handle (2026.8.1-beta.3 dist/builtin-openclaw-*.js: acceptingSteerMessages
// && !runState.aborted && !runAbortController.signal.aborted; 2026.9.6 adds run-registration checks),
// which needs a registered embedded run, a gateway session key and the attempt's abort controller.
// The driver applies the same predicate over its own flags (refused once the run is aborted or the
// session's prompt has returned) before each steer, as queueMessage does.
//
// Seams that are not public: Agent.steeringQueue/followUpQueue.drain are wrapped to record each poll
// (OpenClaw's own tests do the same); with stopAfterTurn Agent.createLoopConfig is wrapped to add
// shouldStopAfterTurn, which publicly only runAgentLoop's config accepts; at the session layer
// Agent.continue is wrapped to record each post-run continue (what it does is unchanged), the
// session's agent.streamFn is replaced by the scripted model (the provider), and its
// agent.beforeToolCall (the extension runner's tool_call hook) by the scripted preflight.

import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

function parseArgs(argv) {
  const args = {};
  for (let i = 0; i < argv.length; i += 2) args[argv[i].replace(/^--/, "")] = argv[i + 1];
  if (!args["package-dir"] || !args.scenarios) throw new Error("usage: driver.mjs --package-dir DIR --scenarios FILE");
  return args;
}

function exportedPath(packageDir, subpath) {
  const manifest = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8"));
  const entry = manifest.exports?.[subpath];
  const target = typeof entry === "string" ? entry : entry?.import ?? entry?.default;
  if (!target) throw new Error(`${packageDir} does not export ${subpath}`);
  return { version: manifest.version, url: pathToFileURL(join(packageDir, target)).href };
}

async function loadAgentCore(packageDir) {
  return import(exportedPath(packageDir, "./plugin-sdk/agent-core").url);
}

// Private dist modules of each pinned build that define createAgentSession and SettingsManager.
const SESSION_MODULES = {
  "2026.8.1-beta.3": { factory: "dist/sessions-B7NNe-tY.js", settings: "dist/sessions-B7NNe-tY.js" },
  "2026.9.6": { factory: "dist/resource-loader-B1DeXClE.mjs", settings: "dist/resource-loader-v8341X6T.mjs" },
};

function byName(module, name, file) {
  const found = Object.values(module).find((value) => typeof value === "function" && value.name === name);
  if (!found) throw new Error(`${file} defines no ${name}`);
  return found;
}

// OpenClaw's session layer: the factory and settings class from the private modules, and the public
// AuthStorage, ModelRegistry and SessionManager of ./plugin-sdk/agent-sessions.
async function loadSessionLayer(packageDir) {
  const sessions = exportedPath(packageDir, "./plugin-sdk/agent-sessions");
  const paths = SESSION_MODULES[sessions.version];
  if (!paths) {
    throw new Error(`no known AgentSession module for openclaw@${sessions.version} (known: ${Object.keys(SESSION_MODULES).join(", ")}); run --layer agent`);
  }
  const load = async (file) => import(pathToFileURL(join(packageDir, file)).href);
  const publicApi = await import(sessions.url);
  const settings = await load(paths.settings);
  const SettingsManager = byName(settings, "SettingsManager", paths.settings);
  const DefaultResourceLoader = byName(settings, "DefaultResourceLoader", paths.settings);
  // Shared by every session of the run, as they hold nothing a scenario changes: in-memory auth with
  // a key for the scripted model's provider, its model registry, and an empty resource loader with the
  // options of the embedded runner's createEmbeddedAgentResourceLoader (no extensions, skills, prompt
  // templates, themes or context files).
  const authStorage = publicApi.AuthStorage.inMemory();
  authStorage.setRuntimeApiKey(MODEL.provider, "scripted");
  const dir = mkdtempSync(join(tmpdir(), "steersim-openclaw-"));
  const resourceLoader = new DefaultResourceLoader({ cwd: dir, agentDir: dir, settingsManager: SettingsManager.inMemory({}),
    noExtensions: true, noSkills: true, noPromptTemplates: true, noThemes: true, noContextFiles: true, systemPrompt: "",
    appendSystemPrompt: [] });
  await resourceLoader.reload();
  return {
    createAgentSession: byName(await load(paths.factory), "createAgentSession", paths.factory),
    SettingsManager, SessionManager: publicApi.SessionManager, authStorage,
    modelRegistry: publicApi.ModelRegistry.inMemory(authStorage), resourceLoader, dir,
  };
}

// The scripted model is filed under a bundled provider: for a provider id no plugin declares,
// createAgentSession's thinking default rescans the plugin manifests on every session (~0.1 s).
const MODEL = {
  id: "scripted", name: "scripted", api: "openai-completions", provider: "openai", baseUrl: "",
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

async function runScenario(core, layer, scenario) {
  const records = [];
  const seen = new Map();
  const plan = scenario.plan.map((step) => ({ ...step, done: false }));
  let agent;
  let session;
  let sessionManager;
  let requests = 0;
  let accepting = true;
  let aborted = false;
  // The embedded runner's admission predicate (see the header): refused once aborted or finished.
  const canInject = () => accepting && !aborted;
  const failures = [];

  // Perform one planned action.
  const perform = (step) => {
    if (step.action === "steer" && session && !canInject()) {
      records.push({ ev: "steer_refused", id: step.id, reason: "finalizing" });
    } else if (step.action === "steer" && session) {
      // What AgentSession.steer runs once its transcript-recorder await and gate recheck are passed:
      // queueSteer records the message in the session's queue and calls agent.steer, synchronously, so
      // the steer lands at the planned point (see the header).
      session.queueSteer(step.id).catch((broken) => failures.push(String(broken?.stack ?? broken)));
    } else if (step.action === "steer") {
      agent.steer(userMessage(step.id));
    } else {
      records.push({ ev: "abort" });
      aborted = true;
      if (session) session.abort().catch(() => {});
      else agent.abort();
    }
  };

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
      perform(step);
    }
  };

  // The scripted provider answers when its stream is read, so an abort that lands after the request
  // (for a session steer's sake, a few microtasks later) still aborts the response.
  const streamFn = (_model, context, options) => {
    requests += 1;
    const llmCall = requests;
    const users = context.messages.filter((m) => m.role === "user").map((m) => textOf(m.content));
    observe({ ev: "model_request", llmCall, users });
    const answer = () => {
      const aborted = options?.signal?.aborted;
      const toolTurn = llmCall <= scenario.toolTurns && scenario.calls > 0 && !aborted;
      const content = toolTurn
        ? Array.from({ length: scenario.calls }, (_, j) => ({ type: "toolCall", id: `c${j}`, name: "tool", arguments: {} }))
        : [{ type: "text", text: aborted ? "" : `answer ${llmCall}` }];
      const stopReason = aborted ? "aborted" : toolTurn ? "toolUse" : "stop";
      return { role: "assistant", content, api: MODEL.api, provider: MODEL.provider, model: MODEL.id,
        usage: USAGE, stopReason, timestamp: 1, ...(aborted ? { errorMessage: "aborted" } : {}) };
    };
    let message;
    const settle = async () => {
      await new Promise((resolve) => setImmediate(resolve));
      message ??= answer();
      return message;
    };
    return {
      async *[Symbol.asyncIterator]() {
        const done = await settle();
        yield { type: "done", reason: done.stopReason, message: done };
      },
      result: settle,
    };
  };

  // Tools take time: each implementation is held across macrotasks the driver controls and released
  // one at a time, in launch order or, with finishOrder "reverse" in a parallel batch, the last launched
  // first, each once everything the previous release set off has run.
  const held = [];
  const reverse = scenario.finishOrder === "reverse" && scenario.toolExecution === "parallel";
  const releaseNext = () => {
    (reverse ? held.pop() : held.shift())();
    if (held.length > 0) setImmediate(releaseNext);
  };
  const tool = {
    name: "tool", label: "tool", description: "scripted tool",
    parameters: { type: "object", properties: {}, additionalProperties: false },
    execute: async (toolCallId) => {
      observe({ ev: "tool_execute", toolCallId });
      await new Promise((resolve) => {
        held.push(resolve);
        if (held.length === 1) setImmediate(releaseNext);
      });
      return { content: [{ type: "text", text: `${toolCallId} result` }], details: {} };
    },
  };

  const preflight = async ({ toolCall }) =>
    toolCall.id === `c${scenario.blockedCall}` ? { block: true, reason: "blocked by policy" } : undefined;
  if (layer.session) {
    const { dir } = layer.session;
    sessionManager = layer.session.SessionManager.inMemory(dir);
    ({ session } = await layer.session.createAgentSession({
      cwd: dir, agentDir: dir, authStorage: layer.session.authStorage, modelRegistry: layer.session.modelRegistry,
      resourceLoader: layer.session.resourceLoader,
      settingsManager: layer.session.SettingsManager.inMemory({ steeringMode: scenario.steeringMode,
        followUpMode: scenario.followUpMode }),
      sessionManager, model: MODEL, tools: [tool.name],
      customTools: [tool],
    }));
    agent = session.agent;
    agent.streamFn = streamFn;
    agent.beforeToolCall = preflight;
    agent.toolExecution = scenario.toolExecution;
    const resume = agent.continue.bind(agent);
    agent.continue = () => {
      observe({ ev: "session_continue" });
      return resume();
    };
  } else {
    agent = new core.Agent({
      initialState: { model: MODEL, tools: [tool] }, streamFn, toolExecution: scenario.toolExecution,
      steeringMode: scenario.steeringMode, followUpMode: scenario.followUpMode, beforeToolCall: preflight,
    });
  }
  // The moment a steer reaches the Agent's queue.
  const enqueue = agent.steer.bind(agent);
  agent.steer = (message) => {
    records.push({ ev: "steer", id: textOf(message.content) });
    enqueue(message);
  };
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
    observe(project(event));
  });
  for (let n = 1; n <= scenario.followUps; n++) {
    if (session) await session.followUp(`f${n}`);
    else agent.followUp(userMessage(`f${n}`));
  }

  let error = null;
  try {
    observe({ ev: "start" });
    if (session) await session.prompt("p0");
    else await agent.prompt(userMessage("p0"));
    await agent.waitForIdle();
  } catch (broken) {
    error = String(broken?.stack ?? broken);
  } finally {
    accepting = false;
    if (session) session.dispose();
  }
  if (failures.length > 0 && error === null) error = failures.join("\n");
  const texts = (queue) => queue.messages.map((m) => textOf(m.content));
  records.push({ ev: "settled", queued: texts(agent.steeringQueue), followUps: texts(agent.followUpQueue) });
  const result = { name: scenario.name, records, unperformed: plan.filter((s) => !s.done).length, error };
  // With --transcripts yes, the session's transcript as OpenClaw persists it (its transcript events, one
  // JSON object a line in an exported or archived session), for `steersim validate --format openclaw-transcript`.
  if (args.transcripts === "yes" && sessionManager) result.transcript = sessionManager.getPersistedEntries();
  return result;
}

const args = parseArgs(process.argv.slice(2));
const core = await loadAgentCore(args["package-dir"]);
const scenarios = JSON.parse(readFileSync(args.scenarios, "utf8"));
const layer = { session: scenarios.some((s) => s.layer === "session") ? await loadSessionLayer(args["package-dir"]) : null };
for (const scenario of scenarios) {
  const at = { session: scenario.layer === "session" ? layer.session : null };
  process.stdout.write(`${JSON.stringify(await runScenario(core, at, scenario))}\n`);
}
if (layer.session) rmSync(layer.session.dir, { recursive: true, force: true });
