/**
 * One host of the fleet test, in its own OS process: a hook runtime with its own sandbox worker on the
 * shared PostgreSQL store, running agent runs for three tenants without pause until the parent says
 * `stop`. It tells the parent (IPC) what it saw: each run's version and its hook calls, each change of a
 * tenant's active version it picked up (watched every 2 ms), quarantine entries, store outages, and at the
 * end its decision log's counts. argv[2]: {url, host}.
 */
import { declaredTool, scriptedModel } from "../../src/agent/index.js";
import { strikeOf } from "../../src/dispatch/quarantine.js";
import { createHookRuntime, type RunEvent } from "../../src/runtime/index.js";
import type { FleetMessage, HostConfig, RunReport } from "./fleet-messages.js";

const { url, host, tenants, quarantine, lanes } = JSON.parse(process.argv[2] ?? "{}") as HostConfig;
const send = (message: FleetMessage) => process.send?.(message);
const TIMEOUT_MS = 100;
let stopping = false;
process.on("message", (m) => {
  if (m === "stop") stopping = true;
});

const runtime = await createHookRuntime({
  store: url,
  host,
  limits: { timeoutMs: TIMEOUT_MS },
  executor: { workers: 1, spareWorker: false },
  dispatch: { budgets: { turnMs: 30_000, runMs: 60_000 }, quarantine },
  decisionLog: { all: { sample: 1 }, flushMs: 50 },
  onEvent: (event) => {
    if (event.type === "quarantine.entered")
      send({
        type: "quarantine",
        host,
        at: event.at,
        tenant: event.tenantId,
        origin: event.origin,
        strike: event.strike,
      });
    else if (event.type === "decisionlog.dropped") send({ type: "dropped", host, count: event.count });
    else if (event.type === "store.unreachable" || event.type === "store.reachable")
      send({ type: "store", host, at: Date.now(), state: event.type });
  },
});
const store = runtime.store;
if (store === undefined) throw new Error("no store");

// Pick-up: the first moment this host's `active()` serves each new version.
const seen = new Map<string, number>();
const watcher = setInterval(() => {
  for (const tenant of tenants) {
    void store.active(tenant as never).then(
      (bundle) => {
        const version = bundle?.version ?? 0;
        if (seen.get(tenant) === version) return;
        seen.set(tenant, version);
        send({ type: "pickup", host, tenant, version, at: Date.now() });
      },
      () => undefined,
    );
  }
}, 2);

const shell = declaredTool({
  name: "shell",
  parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"] },
  result: "ran {command}",
});
const TURNS = [
  {
    toolCalls: [
      { name: "shell", args: { command: "ls" } },
      { name: "shell", args: { command: "git status" } },
    ],
  },
  { text: "done" },
];
let n = 0;
const finished: RunReport[] = [];
const reportRuns = () => {
  if (finished.length > 0) send({ type: "runs", host, runs: finished.splice(0) });
};
const reporter = setInterval(reportRuns, 100);

async function runOnce(tenant: string): Promise<void> {
  const runId = `run_${host}_${n++}`;
  const report: RunReport = {
    type: "run",
    host,
    tenant,
    runId,
    startedAt: Date.now(),
    endedAt: 0,
    version: null,
    calls: [],
  };
  const onEvent = (event: RunEvent) => {
    if (event.type === "run.started") report.version = event.bundle?.version ?? null;
    if (event.type === "hook.called" && event.record.source === "tenant") {
      const { outcome, bundle, cpuMs, runMs, loadMs, loadAfterRecycle } = event.record;
      const failure = outcome.type === "failed" ? outcome.failure : undefined;
      // As the dispatcher counts it: a timeout starved short of its CPU time by a busy machine strikes nothing.
      const strike = strikeOf(failure, { cpuMs, runMs, loadMs, loadAfterRecycle }, TIMEOUT_MS);
      report.calls.push({
        version: bundle?.version ?? null,
        code: failure?.code ?? "ok",
        struck: strike !== undefined,
        at: Date.now(),
      });
    }
  };
  try {
    await runtime.runAgent({
      tenantId: tenant,
      runId,
      input: "go",
      tools: [shell],
      model: scriptedModel(TURNS),
      onEvent,
    });
    report.endedAt = Date.now();
    finished.push(report);
  } catch (error) {
    send({ type: "error", host, runId, message: error instanceof Error ? error.message : String(error) });
  }
}

/** One lane of back-to-back runs: its tenants in turn, from `offset`. */
async function lane(mine: readonly string[], offset: number): Promise<void> {
  for (let i = offset; !stopping; i++) {
    await runOnce(mine[i % mine.length] ?? "acme");
    // A scripted model answers at once: a run whose hooks make no sandbox call (a quarantined tenant's, or
    // a matcher that skips every call) never leaves the microtask queue, and a lane of such runs would
    // starve this host's event loop (its LISTEN connection, timers, IPC). A real model is I/O.
    await new Promise((resolve) => setImmediate(resolve));
  }
}

send({ type: "ready", host });
const split = [tenants.filter((t) => t !== "globex"), tenants.filter((t) => t === "globex")];
await Promise.all(
  lanes === "split" ? [lane(split[0] ?? [], 0), lane(split[1] ?? [], 0)] : [lane(tenants, 0), lane(tenants, 1)],
);
clearInterval(watcher);
clearInterval(reporter);
reportRuns();
// A close that does not end is a finding: the stats go to the parent either way, saying so.
let closed = false;
await Promise.race([
  runtime.close().then(() => {
    closed = true;
  }),
  new Promise((resolve) => setTimeout(resolve, 60_000).unref()),
]);
const stats = runtime.decisionLog?.stats() ?? {
  recorded: 0,
  written: 0,
  droppedFull: 0,
  droppedFailed: 0,
  requeued: 0,
  pending: 0,
};
send({ type: "stats", host, closed, ...stats });
process.disconnect?.();
