import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { createHookExecutor, shardOf } from "../../../sandbox/supervisor/index.js";
import type { LoadedScenario } from "../../agent/index.js";
import { buildBundle } from "../../bundler/index.js";
import { type HookExecutor, Limits, type LimitsInput, type TenantId } from "../../protocol/index.js";
import { createHookRuntime, type RunAgentResult, type RunEvent, runTrace } from "../../runtime/index.js";
import { SqliteBundleStore } from "../../store/index.js";
import { line, lines, type Printed } from "../../terminal/index.js";
import { CliError, type CliIO, type Command, EXIT, writeJson } from "../command.js";
import { eventJson } from "../json-output-events.js";
import { PACKAGE_ROOT } from "../package-info.js";
import { type DemoTally, summaryLines, tallyOf } from "./demo-summary.js";
import { runScenario, scenarioOf, toolsOf } from "./run.js";

const HELP = `Usage: isohook demo [--json]

Runs scripted agent sessions for five tenants at once, through the real process sandbox and a SQLite
store in a temporary folder (removed afterwards), and prints what each hook decided, on which bundle
version, in how long:
  acme     a coding agent: a destructive shell command blocked, a command moved into the workdir,
           an API key redacted from a tool result (bundle v2; v1 was uploaded first)
  globex   a data agent: tools restricted, SQL given a row limit, calls per turn capped, an unfinished
           answer sent back, the run ended by its turn budget
  mallory  a hook that spins forever: cut at the timeout, blocked (fail closed), then quarantined,
           while the other two carry on — acme on the same worker process, its calls queued behind
           the spins but never charged for them
  initech  a release agent: its push to main is held for a human (ask), who rejects it (the
           scenario's \`approvals\`); the model pushes a branch instead
  umbrella an ops assistant whose streamed reply starts to leak an API key: its model.stream hook
           stops the run mid-stream, so the rest of the reply never streams
The scenarios are scenarios/*.json; each also runs alone with \`isohook run --scenario <file>\`.

Options:
  --json       One JSON line per event ({"tenant", "event"}), then {"type":"summary", ...}
  -h, --help   Show this help

Exit codes: 0 every session went as scripted, 1 otherwise, 2 usage.
`;

/** The demo's tenants: each scenario, plus bundles uploaded before its own (to show versions). */
const TENANTS = [
  { scenario: "scenarios/acme-coding-agent.json", earlier: ["hooks/block-destructive-shell"] },
  { scenario: "scenarios/globex-data-agent.json", earlier: [] },
  { scenario: "scenarios/mallory-runaway.json", earlier: [] },
  { scenario: "scenarios/initech-release.json", earlier: [] },
  { scenario: "scenarios/umbrella-stream-guard.json", earlier: [] },
] as const;

export interface DemoCommandDeps {
  /** Opens the sandbox with these limits; the command closes it. */
  readonly openExecutor: (limits: LimitsInput, signal?: AbortSignal) => Promise<HookExecutor>;
  /**
   * Sandbox limits; default docs/architecture.md, "Limits" (50 ms per call). Tests on loaded machines give hooks more
   * room.
   */
  readonly limits?: LimitsInput;
  /** Hook time per turn and per run; default 250 / 5000 ms. */
  readonly budgets?: { readonly turnMs?: number; readonly runMs?: number };
}

/**
 * Two workers on every machine, so the sharding (and so the trace) is the same everywhere: acme and
 * mallory share a worker (the runaway hook has a well-behaved neighbour), globex has the other.
 */
export const DEMO_WORKERS = 2;

const defaultDeps: DemoCommandDeps = {
  openExecutor: (limits, signal) =>
    createHookExecutor({ workers: DEMO_WORKERS, limits, ...(signal ? { signal } : {}) }),
};

export function createDemoCommand(deps: DemoCommandDeps = defaultDeps): Command {
  return {
    name: "demo",
    summary: "Run scripted sessions for four tenants and show what their hooks decided",
    help: HELP,
    options: {},
    allowPositionals: false,
    async run(args, io) {
      const started = performance.now();
      const scenarios = await Promise.all(TENANTS.map((t) => scenarioOf(join(PACKAGE_ROOT, t.scenario))));
      const dir = await mkdtemp(join(tmpdir(), "isohook-demo-"));
      const limits = Limits.parse(deps.limits ?? {});
      const executor = await deps.openExecutor(limits, io.signal);
      const store = await SqliteBundleStore.open(join(dir, "store.db"));
      try {
        const uploads = await uploadAll(store, executor, scenarios, io);
        if (!args.json) io.stdout(lines(setupLines(dir, executor, uploads, limits)));
        const runtime = await createHookRuntime({
          executor,
          store,
          limits,
          ...(deps.budgets ? { dispatch: { budgets: deps.budgets } } : {}),
        });
        const events = new Map<string, RunEvent[]>(scenarios.map((s) => [s.scenario.tenant, []]));
        let results: RunAgentResult[];
        try {
          results = await Promise.all(
            scenarios.map((loaded) => {
              const tenant = loaded.scenario.tenant;
              const sink = events.get(tenant) ?? [];
              return runScenario(runtime, loaded, toolsOf(loaded), io, (event) => sink.push(event), `${tenant}-run-1`);
            }),
          );
        } finally {
          await runtime.close();
        }
        const tallies = scenarios.map((loaded, i) =>
          tallyOf(
            loaded,
            events.get(loaded.scenario.tenant) ?? [],
            results[i],
            shardOf(loaded.scenario.tenant, DEMO_WORKERS),
          ),
        );
        const problems = expectations(tallies);
        if (args.json) {
          for (const [tenant, list] of events)
            for (const event of list) writeJson(io, { tenant, event: eventJson(event) });
          writeJson(io, { type: "summary", tenants: tallies, problems, seconds: Number(seconds(started)) });
        } else {
          for (const loaded of scenarios) io.stdout(traceOf(loaded, events.get(loaded.scenario.tenant) ?? []));
          io.stdout(
            lines([...summaryLines(tallies, limits.timeoutMs), line``, line`Finished in ${seconds(started)} s.`]),
          );
        }
        if (problems.length > 0) throw new CliError(failureMessage(problems, tallies, limits), "demo_failed");
        return EXIT.ok;
      } finally {
        await store.close();
        await executor.close();
        await rm(dir, { recursive: true, force: true });
      }
    },
  };
}

export const demoCommand = createDemoCommand();

interface Upload {
  readonly tenantId: TenantId;
  readonly version: number;
  readonly entry: string;
  readonly active: boolean;
}

/** Bundles each tenant's hook entries and uploads them to the store, the scenario's own last and active. */
async function uploadAll(store: SqliteBundleStore, executor: HookExecutor, scenarios: LoadedScenario[], io: CliIO) {
  const uploads: Upload[] = [];
  for (const [i, loaded] of scenarios.entries()) {
    const { tenant, config } = loaded.scenario;
    const entries = [...(TENANTS[i]?.earlier.map((e) => join(PACKAGE_ROOT, e)) ?? []), loaded.hookEntry ?? ""];
    for (const [n, entry] of entries.entries()) {
      const active = n === entries.length - 1;
      // The example hooks share code across hooks/: that folder is the demo tenants' hook folder.
      const built = await buildBundle(entry, {
        executor,
        root: join(PACKAGE_ROOT, "hooks"),
        ...(io.signal ? { signal: io.signal } : {}),
      });
      const { version } = await store.upload({
        tenantId: tenant,
        code: built.code,
        sourceMap: built.sourceMap,
        manifest: built.manifest,
        ...(config !== undefined ? { config } : {}),
        by: "isohook demo",
        activate: active,
      });
      uploads.push({ tenantId: tenant, version: version.version, entry: relative(PACKAGE_ROOT, entry), active });
    }
  }
  return uploads;
}

function setupLines(dir: string, executor: HookExecutor, uploads: Upload[], limits: Limits): Printed[] {
  const shown = [
    line`isohook demo: five tenants, a scripted model, a SQLite store and sandbox worker processes`,
    line``,
    line`  store    ${join(dir, "store.db")} (removed at the end)`,
    line`  sandbox  ${executor.mode} mode: V8 isolates in ${DEMO_WORKERS} supervised worker processes, ${limits.timeoutMs} ms and ${limits.memoryMb} MB per hook call`,
  ];
  for (const [i, u] of uploads.entries()) {
    const where = u.active ? ` (active, runs on worker ${shardOf(u.tenantId, DEMO_WORKERS)})` : "";
    shown.push(line`  ${i === 0 ? "uploaded" : "        "} ${u.tenantId} v${u.version} from ${u.entry}${where}`);
  }
  // Two empty lines: the last one is ended by the next write, the first trace.
  shown.push(line`  running the four sessions at the same time…`, line``);
  return shown;
}

function traceOf(loaded: LoadedScenario, events: readonly RunEvent[]): Printed {
  const { scenario } = loaded;
  const trace = runTrace();
  const shown = [line`━━ ${scenario.name ?? scenario.tenant}`];
  if (scenario.description) shown.push(line`   ${scenario.description}`);
  for (const event of events) shown.push(...trace(event));
  const finished = events.find((e) => e.type === "run.finished");
  const answer = [...events].reverse().find((e) => e.type === "model.replied");
  if (finished && answer?.type === "model.replied" && answer.message.content !== "") {
    shown.push(line`  answer: ${answer.message.content}`);
  }
  return lines([...shown, line``]);
}

/** What the demo promises; anything else is a failed demo (exit 1). */
function expectations(tallies: readonly DemoTally[]): string[] {
  const problems: string[] = [];
  const by = new Map(tallies.map((t) => [t.tenant, t]));
  const acme = by.get("acme");
  const globex = by.get("globex");
  const mallory = by.get("mallory");
  const initech = by.get("initech");
  const umbrella = by.get("umbrella");
  if (umbrella?.stopReason !== "stopped" || !umbrella.decided.includes("stop")) {
    problems.push(
      `umbrella: expected its stream hook to stop the run; got ${umbrella?.decided.join(", ")} → ${umbrella?.stopReason}`,
    );
  }
  if (
    acme?.stopReason !== "completed" ||
    !acme.decided.includes("block") ||
    !acme.decided.includes("rewrite") ||
    !acme.decided.includes("patch")
  ) {
    problems.push(
      `acme: expected a block, a rewrite and a redaction, then completion; got ${acme?.decided.join(", ")} → ${acme?.stopReason}`,
    );
  }
  if (globex?.stopReason !== "completed" || !globex.decided.includes("end") || !globex.decided.includes("continue")) {
    problems.push(
      `globex: expected a nudge and the turn budget to end the run; got ${globex?.decided.join(", ")} → ${globex?.stopReason}`,
    );
  }
  for (const calm of [acme, globex, initech, umbrella]) {
    if (calm && Object.keys(calm.failures).length > 0) {
      problems.push(`${calm.tenant}: its hooks should never fail, but: ${JSON.stringify(calm.failures)}`);
    }
  }
  if (!mallory?.quarantined || (mallory.failures.timeout ?? 0) < 1 || mallory.stopReason === "error") {
    problems.push(
      `mallory: expected timeouts and a quarantine; got ${JSON.stringify(mallory?.failures)} → ${mallory?.stopReason}`,
    );
  }
  if (initech?.stopReason !== "completed" || !initech.decided.includes("ask")) {
    problems.push(
      `initech: expected a push held for approval, answered, then completion; got ${initech?.decided.join(", ")} → ${initech?.stopReason}`,
    );
  }
  if (mallory !== undefined && acme !== undefined && mallory.worker !== acme.worker) {
    problems.push("mallory: expected to share a worker with acme, to show a neighbour contained");
  }
  return problems;
}

function failureMessage(problems: readonly string[], tallies: readonly DemoTally[], limits: Limits): string {
  const calmTimeouts = tallies.some((t) => !t.quarantined && (t.failures.timeout ?? 0) > 0);
  const hint = calmTimeouts
    ? `\nHook calls are timed in wall-clock time (${limits.timeoutMs} ms a call, plus turn and run budgets): on a machine this busy, well-behaved hooks ran out of time. Run the demo again when the machine is quieter.`
    : "";
  return `The demo did not go as scripted:\n  ${problems.join("\n  ")}${hint}`;
}

function seconds(started: number): string {
  return ((performance.now() - started) / 1000).toFixed(1);
}
