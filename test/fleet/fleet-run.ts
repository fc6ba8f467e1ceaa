/**
 * The fleet under faults: `hosts` OS processes (test/fleet/fleet-host.ts), each with its own sandbox
 * worker, on one fresh PostgreSQL database, run agent runs for three tenants without pause while this
 * process, the operator, changes what they run: acme's active version flips every `stepMs`, globex gets a
 * rollout and its rollback, mallory's bundle spins until the fleet quarantines it and the operator releases
 * it. Meanwhile every isohook connection to the database is terminated (`pg_terminate_backend`); then the
 * database refuses connections (`ALLOW_CONNECTIONS false`, as a server restart does, for this database
 * only) until every host has told `store.unreachable`, for one more step; the PostgreSQL server is
 * restarted when `restart` is set; and the last host is SIGKILLed. The report holds
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
import type { FleetMessage, HostConfig, Lanes, RunReport } from "./fleet-messages.js";
import { type Change, type FleetReport, outagesOf, pickups, violation } from "./fleet-report.js";

export type { FleetReport } from "./fleet-report.js";
export { percentile } from "./fleet-report.js";

export interface FleetOptions {
  readonly hosts: number;
  /** Time between two operator steps. */
  readonly stepMs: number;
  /** Restart the PostgreSQL server mid-traffic (pg_ctlcluster): only where nothing else uses it. */
  readonly restart: boolean;
  /** How each host's two lanes share the tenants (default `mixed`: up to two of mallory's calls in flight). */
  readonly lanes?: Lanes;
  readonly log?: (line: string) => void;
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
  const waiters: { match: (m: FleetMessage) => boolean; resolve: () => void; fail: (e: Error) => void }[] = [];
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
    const victim = names.at(-1) ?? "host-1";
    for (const host of names) {
      const config: HostConfig = {
        url: url.toString(),
        host,
        tenants: TENANTS,
        quarantine: QUARANTINE,
        lanes: options.lanes ?? "mixed",
      };
      const child = fork(HOST_SCRIPT, [JSON.stringify(config)], {
        cwd: REPO,
        execArgv: ["--no-node-snapshot", "--import", "tsx"],
        stdio: ["ignore", "inherit", "inherit", "ipc"],
      });
      const take = (m: FleetMessage) => {
        messages.push(m);
        if (m.type === "store" || m.type === "quarantine")
          log(
            `${m.host}: ${m.type === "store" ? m.state : `${m.tenant} quarantined (${m.origin}, strike ${m.strike})`} at +${m.at - started} ms`,
          );
        for (const w of waiters.filter((w) => w.match(m))) w.resolve();
      };
      child.on("message", (m: FleetMessage) => {
        if (m.type !== "runs") take(m);
        else for (const run of m.runs) take(run);
      });
      child.on("exit", (code, signal) => {
        // After its stats a host exits as it should.
        if (messages.some((m) => m.type === "stats" && m.host === host)) return;
        const how = signal === null ? `exit code ${code}` : signal;
        for (const w of waiters) w.fail(new Error(`fleet: ${host} exited (${how})`));
      });
      children.set(host, child);
    }
    // Generous: on a loaded 2-core machine four hosts start in 15–45 s.
    // A host that exits before it is SIGKILLed on purpose fails every wait (not a silent 240 s hang).
    const until = (what: string, match: (m: FleetMessage) => boolean, ms = 240_000) =>
      messages.some(match)
        ? Promise.resolve()
        : new Promise<void>((resolve, reject) => {
            const timer = setTimeout(() => reject(new Error(`fleet: no ${what} within ${ms} ms`)), ms);
            const settle = (error?: Error) => {
              clearTimeout(timer);
              if (error === undefined) resolve();
              else if (!error.message.includes(`${victim} exited (SIGKILL)`)) reject(error);
            };
            waiters.push({ match, resolve: () => settle(), fail: (e) => settle(e) });
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
    // A loaded host can go seconds without a globex run (its one worker busy with mallory's spins).
    await poll("a globex run on the rolled-out v2", () =>
      messages.some((m) => m.type === "run" && m.tenant === "globex" && m.version === 2),
    );
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
    // Down only once every host picked that flip up: a host that has not read it yet when the database
    // goes away decides on the version it knows, by design, for the whole outage.
    const everyHostPickedUp = () => {
      const flipped = changes.at(-1);
      const pickedUp = (host: string) =>
        messages.some(
          (m) =>
            m.type === "pickup" &&
            m.host === host &&
            m.tenant === "acme" &&
            m.version === flipped?.after[0] &&
            m.at >= (flipped?.callAt ?? 0),
        );
      return poll("every host picked up the flip before the outage", () => names.every(pickedUp));
    };
    await everyHostPickedUp();
    // mallory's first episode ends before the database goes down: K + hosts is the bound while the store
    // answers; without it each host's own book decides (K strikes each).
    const cutOffEverywhere = (m: FleetMessage, host: string) =>
      m.type === "quarantine" && m.tenant === "mallory" && m.host === host;
    await poll("mallory cut off on every host", () => names.every((h) => messages.some((m) => cutOffEverywhere(m, h))));
    // The database down for a while: connections refused, the open ones cut.
    const downAt = Date.now();
    await sql(admin.toString(), `ALTER DATABASE ${database} ALLOW_CONNECTIONS false`);
    await sql(admin.toString(), "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", [
      database,
    ]);
    const told = (state: string, since: number) => (host: string) =>
      messages.some((m) => m.type === "store" && m.host === host && m.state === state && m.at >= since);
    await poll("every host told store.unreachable", () => names.every(told("store.unreachable", downAt)));
    // Held down until every host has decided a whole run on what it had (a loaded host's runs can be slow).
    const decidedWhileDown = (host: string) => {
      const lost = messages.find((m) => m.type === "store" && m.host === host && m.at >= downAt);
      const since = lost?.type === "store" ? lost.at : Number.POSITIVE_INFINITY;
      return messages.some((m) => m.type === "run" && m.host === host && m.startedAt >= since && m.calls.length > 0);
    };
    await poll("a run decided on every host while the database was down", () => names.every(decidedWhileDown));
    await step();
    const upAt = Date.now();
    await sql(admin.toString(), `ALTER DATABASE ${database} ALLOW_CONNECTIONS true`);
    await poll("every host told store.reachable", () => names.every(told("store.reachable", upAt)));
    log(`database refused connections for ${upAt - downAt} ms; every host back after ${Date.now() - upAt} ms`);
    await step();
    await flipAcme();
    let restartedAt: number | undefined;
    if (options.restart) {
      await everyHostPickedUp();
      restartedAt = Date.now();
      execFileSync("pg_ctlcluster", ["--skip-systemctl-redirect", "15", "main", "restart"], { stdio: "inherit" });
      log(`PostgreSQL restarted in ${Date.now() - restartedAt} ms`);
      await step();
      await flipAcme();
    }
    await step();
    const killedAt = Date.now();
    children.get(victim)?.kill("SIGKILL");
    log(`SIGKILL ${victim}`);
    await step();
    await flipAcme();
    await until("quarantine of mallory", (m) => m.type === "quarantine" && m.tenant === "mallory");
    // A host's own book can cut mallory off before the store's count does: release what the store holds.
    await poll("mallory in the store's book", async () =>
      (await store.quarantine.list({ tenantId: "mallory" as TenantId })).some((q) => q.strike === 1),
    );
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
    // A strike belongs to the episode in which its call ended: a run can start before the release and call after it.
    const strikes: [number, number] = [0, 0];
    for (const r of runs.filter((r) => r.tenant === "mallory"))
      for (const c of r.calls) if (c.struck) strikes[release === undefined || c.at < release.callAt ? 0 : 1] += 1;
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
      down: { at: downAt, upAt },
      restartedAt,
      outages: outagesOf(messages, outageAt, downAt, restartedAt),
      stats: messages.flatMap((m) =>
        m.type === "stats" ? [{ ...m, rows: rowsOf(m.host), told: toldOf(m.host) }] : [],
      ),
      quarantine: { failures: QUARANTINE.failures },
      changes,
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

/** Resolves once `done()` holds, checked every 10 ms, for at most 60 s. */
async function poll(what: string, done: () => boolean | Promise<boolean>): Promise<void> {
  const until = Date.now() + 60_000;
  while (!(await done())) {
    if (Date.now() > until) throw new Error(`fleet: not ${what} within 60 s`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
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
