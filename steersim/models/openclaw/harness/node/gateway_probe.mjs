// Runs OpenClaw's own gateway queue code on a list of cases and prints what it did, as one JSON document.
//
// Usage: node gateway_probe.mjs --package-dir DIR --cases FILE
// FILE: {"settings": [params of resolveQueueSettingsCore, ...], "queues": [{"mode", "cap", "drop",
//        "messages": [{"id", "route"}, ...]}, ...]}
// Output: {"settings": [{mode, debounceMs, cap, dropPolicy}, ...],
//          "queues": [{"accepted": [bool per message], "runs": [{"prompt", "route"}, ...]}, ...]}
//
// The package exports none of this: the functions are imported from private dist modules of the
// installed build by the paths in QUEUE_MODULES (pinned, with the build, by the lock file) and looked
// up there by name:
//   resolveQueueSettingsCore (src/auto-reply/reply/queue/settings.ts): mode and option precedence;
//   enqueueFollowupRun (queue/enqueue.ts): cap, drop policy, overflow summaries;
//   scheduleFollowupDrain (queue/drain.ts): the drain after the active run ends, collect coalescing,
//     cross-route individual drains, the overflow summary run per delivery context.
// A queue case enqueues every message while a run is active (no drain is kicked), then schedules the
// drain the run's end would schedule, with a debounce of 0, and records each follow-up run it starts
// (its prompt and route) until the queue is empty. Routes are Telegram chats `chat<route>`.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const QUEUE_MODULES = {
  "2026.8.1-beta.3": { settings: "dist/settings-CzPXV4qC.js", enqueue: "dist/queue-C-on47tz.js",
    drain: "dist/cleanup-WftV6-wv.js" },
  "2026.9.6": { settings: "dist/settings-5LUPsyZF.mjs", enqueue: "dist/queue-BNa6RTEX.mjs",
    drain: "dist/drain-CyCzQwtX.mjs" },
};

function parseArgs(argv) {
  const args = {};
  for (let i = 0; i < argv.length; i += 2) args[argv[i].replace(/^--/, "")] = argv[i + 1];
  if (!args["package-dir"] || !args.cases) throw new Error("usage: gateway_probe.mjs --package-dir DIR --cases FILE");
  return args;
}

async function lookUp(packageDir, file, name) {
  const module = await import(pathToFileURL(join(packageDir, file)).href);
  const found = Object.values(module).find((value) => typeof value === "function" && value.name === name);
  if (!found) throw new Error(`${file} defines no ${name}`);
  return found;
}

async function loadQueue(packageDir) {
  const { version } = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8"));
  const paths = QUEUE_MODULES[version];
  if (!paths) throw new Error(`no known gateway queue modules for openclaw@${version} (known: ${Object.keys(QUEUE_MODULES).join(", ")})`);
  return {
    resolveQueueSettingsCore: await lookUp(packageDir, paths.settings, "resolveQueueSettingsCore"),
    enqueueFollowupRun: await lookUp(packageDir, paths.enqueue, "enqueueFollowupRun"),
    getFollowupQueueDepth: await lookUp(packageDir, paths.enqueue, "getFollowupQueueDepth"),
    scheduleFollowupDrain: await lookUp(packageDir, paths.drain, "scheduleFollowupDrain"),
  };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

async function runQueue(queue, spec, index) {
  const key = `agent:main:probe-${index}`;
  const settings = { mode: spec.mode, debounceMs: 0, cap: spec.cap, dropPolicy: spec.drop };
  const runs = [];
  const runFollowup = async (queued) => {
    runs.push({ prompt: queued.prompt, route: Number(String(queued.originatingTo).replace("chat", "")) });
  };
  const accepted = spec.messages.map(({ id, route }, n) => queue.enqueueFollowupRun(key, {
    prompt: id, summaryLine: id, messageId: `${key}:${id}`, enqueuedAt: n + 1,
    originatingChannel: "telegram", originatingTo: `chat${route}`,
    run: { sessionId: `probe-${index}`, sessionKey: key, agentId: "main" },
  }, settings, "message-id", runFollowup, false));
  queue.scheduleFollowupDrain(key, runFollowup);
  for (let idle = 0; idle < 20; idle += 1) {
    const before = runs.length;
    await tick();
    if (runs.length !== before || queue.getFollowupQueueDepth(key) > 0) idle = 0;
  }
  return { accepted, runs };
}

const args = parseArgs(process.argv.slice(2));
const queue = await loadQueue(args["package-dir"]);
const cases = JSON.parse(readFileSync(args.cases, "utf8"));
const out = { settings: cases.settings.map((params) => queue.resolveQueueSettingsCore(params)), queues: [] };
for (const [index, spec] of cases.queues.entries()) out.queues.push(await runQueue(queue, spec, index));
process.stdout.write(`${JSON.stringify(out)}\n`);
