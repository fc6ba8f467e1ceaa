/**
 * The fleet under faults: `hosts` OS processes (test/fleet/fleet-host.ts), each with its own sandbox
 * worker, on one fresh PostgreSQL database, run agent runs for three tenants without pause while this
 * process, the operator, changes what they run: acme's active version flips every `stepMs`, globex gets a
 * rollout and its rollback, mallory's bundle spins until the fleet quarantines it and the operator releases
 * it. Meanwhile every isohook connection to the database is terminated (`pg_terminate_backend`), the
 * PostgreSQL server is restarted when `restart` is set, and the last host is SIGKILLed. The report holds
 * what the checks need; `fleet.test.ts` asserts on it and `scripts/fleet.ts` prints it.
 */
import { type ChildProcess, execFileSync, fork } from "node:child_process";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { createHookExecutor } from "../../sandbox/supervisor/index.js";
import { buildBundle } from "../../src/bundler/index.js";
import type { TenantId } from "../../src/protocol/index.js";
import { PostgresBundleStore } from "../../src/store/index.js";
import { PG_TEST_URL } from "../store/helpers/postgres.js";
import type { FleetMessage, RunReport } from "./fleet-messages.js";

export interface FleetOptions {
  readonly hosts: number;
  /** Time between two operator steps. */
  readonly stepMs: number;
  /** Restart the PostgreSQL server mid-traffic (pg_ctlcluster): only where nothing else uses it. */
  readonly restart: boolean;
  readonly log?: (line: string) => void;
}

/** One change the operator made: what could decide a run started before `callAt` and after `retAt`. */
interface Change {
  readonly tenant: string;
  readonly what: string;
  readonly callAt: number;
  readonly retAt: number;
  readonly before: readonly number[];
  readonly after: readonly number[];
}

export interface FleetReport {
  readonly hosts: readonly string[];
  readonly runs: readonly RunReport[];
  readonly errors: readonly Extract<FleetMessage, { type: "error" }>[];
  /** Runs whose version (or one of whose hook calls' version) no change allowed at its start. */
  readonly violations: readonly string[];
  /** Pick-up of each acme flip on each live host: ms from the activation's call, and from its return. */
  readonly pickups: readonly {
    readonly host: string;
    /** The activation's call, ms since the epoch: one per change. */
    readonly change: number;
    readonly fromCall: number;
    readonly fromReturn: number;
  }[];
  /** mallory's calls that ran to their timeout, before the release and after it (each episode ≤ K + hosts). */
  readonly strikes: readonly [number, number];
  /** Hosts that cut mallory off in each episode (by a local or a fleet entry). */
  readonly cutOff: readonly [readonly string[], readonly string[]];
  readonly killed: { readonly host: string; readonly at: number };
  readonly outageAt: number;
  readonly restartedAt: number | undefined;
  /** Each store outage the hosts told (`store.unreachable` … `store.reachable`), in ms after the fault began. */
  readonly outages: readonly {
    readonly host: string;
    readonly fault: "terminate" | "restart";
    readonly lostAt: number;
    readonly backAt: number | undefined;
  }[];
  /** Each live host's decision-log counts, the rows of its runs in the table, and the drops its events told. */
  readonly stats: readonly (Extract<FleetMessage, { type: "stats" }> & {
    readonly rows: number;
    readonly told: number;
  })[];
  readonly quarantine: { readonly failures: number };
  readonly durationMs: number;
}

const HOST_SCRIPT = fileURLToPath(new URL("./fleet-host.ts", import.meta.url));
const REPO = fileURLToPath(new URL("../..", import.meta.url));
const TENANTS = ["acme", "globex", "mallory"];
const QUARANTINE = {
  failures: 5,
  windowMs: 60_000,
  cooldownMs: 120_000,
  maxCooldownMs: 600_000,
  forgetAfterMs: 600_000,
};
/** How long after a change a run may still start on what was there before it: a host's pick-up. */
const PICKUP_SLACK_MS = 1_000;

export async function runFleet(options: FleetOptions): Promise<FleetReport> {
  const log = options.log ?? (() => undefined);
  const started = Date.now();
  const database = `fleet_${randomBytes(5).toString("hex")}`;
  const admin = new URL(PG_TEST_URL);
  await sql(admin.toString(), `CREATE DATABASE ${database}`);
  const url = new URL(PG_TEST_URL);
  url.pathname = `/${database}`;
  url.searchParams.set("schema", "isohook");
  const store = await PostgresBundleStore.open(url.toString());
  const children = new Map<string, ChildProcess>();
  const messages: FleetMessage[] = [];
  const waiters: { match: (m: FleetMessage) => boolean; resolve: () => void }[] = [];
  const changes: Change[] = [];
  try {
    await seed(store);
    const state = async (tenant: string) => {
      const t = await store.tenant(tenant as TenantId);
      return [t?.activeVersion ?? 0, ...(t?.rollout ? [t.rollout.version] : [])];
    };
    const change = async (tenant: string, what: string, act: () => Promise<unknown>) => {
      const before = await state(tenant);
      const callAt = Date.now();
      await act();
      const retAt = Date.now();
      changes.push({ tenant, what, callAt, retAt, before, after: await state(tenant) });
      log(`operator: ${tenant} ${what}`);
    };
    const initial = new Map<string, readonly number[]>();
    for (const t of TENANTS) initial.set(t, await state(t));

    const names = Array.from({ length: options.hosts }, (_, i) => `host-${i + 1}`);
    for (const host of names) {
      const config = { url: url.toString(), host, tenants: TENANTS, quarantine: QUARANTINE };
      const child = fork(HOST_SCRIPT, [JSON.stringify(config)], {
        cwd: REPO,
        execArgv: ["--no-node-snapshot", "--import", "tsx"],
        stdio: ["ignore", "inherit", "inherit", "ipc"],
      });
      child.on("message", (m: FleetMessage) => {
        messages.push(m);
        if (m.type === "store" || m.type === "quarantine")
          log(
            `${m.host}: ${m.type === "store" ? m.state : `${m.tenant} quarantined (${m.origin}, strike ${m.strike})`} at +${m.at - started} ms`,
          );
        for (const w of waiters.filter((w) => w.match(m))) w.resolve();
      });
      children.set(host, child);
    }
    // Generous: on a loaded 2-core machine four hosts start in 15–45 s.
    const until = (what: string, match: (m: FleetMessage) => boolean, ms = 240_000) =>
      messages.some(match)
        ? Promise.resolve()
        : new Promise<void>((resolve, reject) => {
            const timer = setTimeout(() => reject(new Error(`fleet: no ${what} within ${ms} ms`)), ms);
            const done = () => {
              clearTimeout(timer);
              resolve();
            };
            waiters.push({ match, resolve: done });
          });
    for (const host of names) await until(`${host} ready`, (m) => m.type === "ready" && m.host === host);
    log(`${names.length} hosts ready after ${Date.now() - started} ms`);
    const step = () => new Promise((resolve) => setTimeout(resolve, options.stepMs));
    let flip = 2;
    const flipAcme = async () => {
      await change("acme", `activate v${flip}`, () =>
        store.activate({ tenantId: "acme" as TenantId, version: flip, by: "ops" }),
      );
      flip = flip === 2 ? 1 : 2;
    };

    await step();
    await flipAcme();
    await step();
    await change("globex", "rollout v2 50 %", () =>
      store.rollout({ tenantId: "globex" as TenantId, version: 2, percent: 50, by: "ops" }),
    );
    await flipAcme();
    await step();
    // Every isohook connection to the fleet's database, at once: pools and LISTEN connections alike.
    const outageAt = Date.now();
    const cut = await sql(
      admin.toString(),
      "SELECT count(pg_terminate_backend(pid)) AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
      [database],
    );
    log(`terminated ${String(cut[0]?.n)} connections`);
    await step();
    await change("globex", "rollback", () => store.rollback({ tenantId: "globex" as TenantId, by: "ops" }));
    await flipAcme();
    let restartedAt: number | undefined;
    if (options.restart) {
      restartedAt = Date.now();
      execFileSync("pg_ctlcluster", ["--skip-systemctl-redirect", "15", "main", "restart"], { stdio: "inherit" });
      log(`PostgreSQL restarted in ${Date.now() - restartedAt} ms`);
      await step();
      await flipAcme();
    }
    await step();
    const victim = names.at(-1) ?? "host-1";
    const killedAt = Date.now();
    children.get(victim)?.kill("SIGKILL");
    log(`SIGKILL ${victim}`);
    await step();
    await flipAcme();
    await until("quarantine of mallory", (m) => m.type === "quarantine" && m.tenant === "mallory");
    await step();
    await change("mallory", "release v1", () =>
      store.quarantine.release({ tenantId: "mallory" as TenantId, version: 1, by: "ops" }),
    );
    // The fleet's second entry: the strike count went on from the first (the cooldown doubles).
    await until(
      "second quarantine of mallory",
      (m) => m.type === "quarantine" && m.tenant === "mallory" && m.strike === 2,
    );
    await flipAcme();
    await step();

    const live = names.filter((h) => h !== victim);
    for (const host of live) children.get(host)?.send("stop");
    for (const host of live) await until(`${host} stats`, (m) => m.type === "stats" && m.host === host);
    const rows = await sql(
      url.toString(),
      "SELECT split_part(run_id, '_', 2) AS host, count(*)::int AS n FROM isohook.decisions GROUP BY 1",
    );
    const rowsOf = (host: string) => Number(rows.find((r) => r.host === host)?.n ?? 0);
    const toldOf = (host: string) =>
      messages.reduce((n, m) => n + (m.type === "dropped" && m.host === host ? m.count : 0), 0);
    const runs = messages.filter((m): m is RunReport => m.type === "run");
    const release = changes.find((c) => c.tenant === "mallory");
    const episode = (r: RunReport) => (release === undefined || r.startedAt < release.callAt ? 0 : 1);
    const strikes: [number, number] = [0, 0];
    for (const r of runs.filter((r) => r.tenant === "mallory"))
      strikes[episode(r)] += r.calls.filter((c) => c.code === "timeout").length;
    const cutOff: [string[], string[]] = [[], []];
    for (const m of messages)
      if (m.type === "quarantine" && m.tenant === "mallory") {
        const list = cutOff[release === undefined || m.at < release.callAt ? 0 : 1];
        if (!list.includes(m.host)) list.push(m.host);
      }
    return {
      hosts: names,
      runs,
      errors: messages.filter((m): m is Extract<FleetMessage, { type: "error" }> => m.type === "error"),
      violations: runs.flatMap((r) => violation(r, initial, changes)),
      pickups: pickups(messages, changes, killedAt, victim, [outageAt, restartedAt]),
      strikes,
      cutOff,
      killed: { host: victim, at: killedAt },
      outageAt,
      restartedAt,
      outages: outagesOf(messages, outageAt, restartedAt),
      stats: messages.flatMap((m) =>
        m.type === "stats" ? [{ ...m, rows: rowsOf(m.host), told: toldOf(m.host) }] : [],
      ),
      quarantine: { failures: QUARANTINE.failures },
      durationMs: Date.now() - started,
    };
  } finally {
    for (const child of children.values()) if (child.exitCode === null) child.kill("SIGKILL");
    await store.close();
    await sql(admin.toString(), `DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => undefined);
  }
}

/** acme v1 (active) and v2, globex v1 (active) and v2, mallory v1 (active): a bundle that spins. */
async function seed(store: PostgresBundleStore): Promise<void> {
  const executor = await createHookExecutor({ workers: 1, spareWorker: false, limits: { timeoutMs: 1_000 } });
  try {
    const guard = await buildBundle("hooks/block-destructive-shell", { executor });
    const git = await buildBundle("hooks/git-guard", { executor });
    const spins = await buildBundle("test/fixtures/shadow/spins", { executor });
    for (const tenant of ["acme", "globex"]) {
      const tenantId = tenant as TenantId;
      await store.upload({ tenantId, ...guard, by: "ops", activate: true });
      await store.upload({ tenantId, ...git, by: "ops" });
    }
    await store.upload({ tenantId: "mallory" as TenantId, ...spins, by: "ops", activate: true });
  } finally {
    await executor.close();
  }
}

/** Why a run's versions were not allowed at its start, if they were not. */
function violation(run: RunReport, initial: Map<string, readonly number[]>, changes: readonly Change[]): string[] {
  const mine = changes.filter((c) => c.tenant === run.tenant);
  const allowed = new Set(mine.filter((c) => c.retAt <= run.startedAt).at(-1)?.after ?? initial.get(run.tenant));
  for (const c of mine) {
    if (run.startedAt >= c.callAt && run.startedAt <= c.retAt + PICKUP_SLACK_MS) {
      for (const v of [...c.before, ...c.after]) allowed.add(v);
    }
  }
  const used = new Set([run.version, ...run.calls.map((c) => c.version)]);
  const bad = [...used].filter((v) => v === null || !allowed.has(v));
  return bad.length === 0 && used.size === 1
    ? []
    : [`${run.runId} (${run.tenant}) used ${[...used].join(",")}; allowed ${[...allowed].join(",")}`];
}

/** Each host's `store.unreachable` … `store.reachable`, timed from the fault (the last one to start before it). */
function outagesOf(
  messages: readonly FleetMessage[],
  outageAt: number,
  restartedAt: number | undefined,
): FleetReport["outages"] {
  const result: FleetReport["outages"][number][] = [];
  for (const m of messages) {
    if (m.type !== "store" || m.state !== "store.unreachable") continue;
    const restart = restartedAt !== undefined && m.at >= restartedAt;
    const start = restart ? (restartedAt ?? 0) : outageAt;
    const back = messages.find(
      (b) => b.type === "store" && b.host === m.host && b.at >= m.at && b.state === "store.reachable",
    );
    result.push({
      host: m.host,
      fault: restart ? "restart" : "terminate",
      lostAt: m.at - start,
      backAt: back?.type === "store" ? back.at - start : undefined,
    });
  }
  return result;
}

/** Each live host's pick-up of each acme activation, outside the 3 s after an outage or restart. */
function pickups(
  messages: readonly FleetMessage[],
  changes: readonly Change[],
  killedAt: number,
  victim: string,
  outages: readonly (number | undefined)[],
): FleetReport["pickups"] {
  const result: { host: string; change: number; fromCall: number; fromReturn: number }[] = [];
  const next = (c: Change) => changes.find((o) => o.tenant === c.tenant && o.callAt > c.callAt)?.callAt ?? Infinity;
  for (const c of changes.filter((c) => c.tenant === "acme")) {
    if (outages.some((o) => o !== undefined && c.callAt >= o && c.callAt - o < 3_000)) continue;
    const version = c.after[0];
    const hosts = new Set(messages.flatMap((m) => (m.type === "ready" ? [m.host] : [])));
    for (const host of hosts) {
      if (host === victim && c.callAt >= killedAt) continue;
      const seen = messages.find(
        (m) =>
          m.type === "pickup" &&
          m.host === host &&
          m.tenant === "acme" &&
          m.version === version &&
          m.at >= c.callAt &&
          m.at < next(c),
      );
      if (seen?.type === "pickup")
        result.push({
          host,
          change: c.callAt,
          fromCall: seen.at - c.callAt,
          fromReturn: Math.max(0, seen.at - c.retAt),
        });
    }
  }
  return result;
}

async function sql(url: string, text: string, params: unknown[] = []): Promise<Record<string, unknown>[]> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  await client.connect();
  try {
    return (await client.query(text, params)).rows;
  } finally {
    await client.end();
  }
}

/** The p-th percentile (0–100) of values, nearest rank. */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? Number.NaN;
}
