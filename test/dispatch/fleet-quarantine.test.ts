import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  createDispatcher,
  type DispatchEvent,
  type Dispatcher,
  type QuarantineLedger,
} from "../../src/dispatch/index.js";
import { RunId } from "../../src/protocol/index.js";
import { type BundleStore, MemoryBundleStore, PostgresBundleStore, SqliteBundleStore } from "../../src/store/index.js";
import { fakeBundle } from "../store/helpers/bundles.js";
import { dropSchema, freshSchema, pgUrl, postgresAvailable } from "../store/helpers/postgres.js";
import { bundleOf, FakeExecutor, returned, sandboxFailed, TENANT, toolCallEvent } from "./helpers.js";

const K = 5;
const QUARANTINE = { failures: K, windowMs: 60_000, cooldownMs: 30_000, maxCooldownMs: 600_000 };
const WAIT_MS = 5_000;

type Stores = () => Promise<{ stores: BundleStore[]; cleanup: () => Promise<void> }>;
/** Three hosts' handles on one store. */
const fleets: [string, Stores][] = [
  [
    "memory",
    async () => {
      const store = new MemoryBundleStore();
      return { stores: [store, store, store], cleanup: async () => {} };
    },
  ],
  [
    "sqlite",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "isohook-fleet-q-"));
      const stores = await Promise.all([0, 1, 2].map(() => SqliteBundleStore.open(join(dir, "store.db"))));
      return {
        stores,
        cleanup: async () => {
          for (const s of stores) await s.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  ],
];
if (await postgresAvailable()) {
  fleets.push([
    "postgres",
    async () => {
      const schema = freshSchema();
      const stores = await Promise.all([0, 1, 2].map(() => PostgresBundleStore.open(pgUrl(schema))));
      return {
        stores,
        cleanup: async () => {
          for (const s of stores) await s.close();
          await dropSchema(schema);
        },
      };
    },
  ]);
}

/** One host: a dispatcher over a fake sandbox whose calls fail with a timeout while `failing`. */
class Host {
  readonly events: DispatchEvent[] = [];
  readonly executor = new FakeExecutor(() => returned(undefined));
  readonly dispatcher: Dispatcher;
  readonly #waiters: { match: (e: DispatchEvent) => boolean; resolve: (e: DispatchEvent) => void }[] = [];
  readonly name: string;

  constructor(name: string, ledger: QuarantineLedger) {
    this.name = name;
    this.dispatcher = createDispatcher({
      executor: this.executor,
      quarantine: QUARANTINE,
      fleet: { ledger, host: name },
      emit: (e) => {
        this.events.push(e);
        for (const w of this.#waiters.filter((w) => w.match(e))) w.resolve(e);
      },
    });
  }

  /** `n` calls of one run; each times out (the tenant's CPU time) when `failing`. */
  async calls(n: number, hash: string, failing: boolean): Promise<string[]> {
    this.executor.respondWith(() => (failing ? sandboxFailed("timeout", 60, 60) : returned(undefined)));
    const run = this.dispatcher.openRun({
      tenantId: TENANT,
      runId: RunId.parse(`run-${this.name}-${this.events.length}`),
      bundle: bundleOf(["tool.call"], { hash, version: 1 }),
    });
    const reasons: string[] = [];
    for (let i = 0; i < n; i++) {
      const { records } = await run.dispatch("tool.call", toolCallEvent());
      const outcome = records[0]?.outcome;
      reasons.push(outcome?.type === "failed" ? outcome.failure.code : "ok");
    }
    return reasons;
  }

  /** The first event (seen already or to come) that matches; fails after `WAIT_MS`. */
  next(match: (e: DispatchEvent) => boolean): Promise<DispatchEvent> {
    const seen = this.events.find(match);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${this.name}: no matching event in ${WAIT_MS} ms`)), WAIT_MS);
      const done = (e: DispatchEvent) => {
        clearTimeout(timer);
        resolve(e);
      };
      this.#waiters.push({ match, resolve: done });
    });
  }
}

const fromFleet = (e: DispatchEvent) => e.type === "quarantine.entered" && e.origin === "fleet";

describe.each(fleets)("fleet-wide quarantine (%s)", (_name, open) => {
  it("quarantines a bundle on every host once the fleet's failures reach the threshold, and releases it everywhere", async () => {
    const { stores, cleanup } = await open();
    const [a, b, c] = stores as [BundleStore, BundleStore, BundleStore];
    const { manifest, code } = fakeBundle("spinner");
    await a.upload({ tenantId: TENANT, code, manifest, by: "test", activate: true });
    const hosts = [
      new Host("host-a", a.quarantine),
      new Host("host-b", b.quarantine),
      new Host("host-c", c.quarantine),
    ];
    try {
      // 2 + 2 + 1 failures: no host reaches K alone, the fleet does.
      await hosts[0]?.calls(2, manifest.hash, true);
      await hosts[1]?.calls(2, manifest.hash, true);
      await hosts[2]?.calls(1, manifest.hash, true);
      const entered = await Promise.all(hosts.map((h) => h.next(fromFleet)));
      for (const e of entered)
        expect(e).toMatchObject({ origin: "fleet", strike: 1, cooldownMs: 30_000, code: "timeout" });
      expect(
        hosts.flatMap((h) => h.events.filter((e) => e.type === "quarantine.entered" && e.origin === "host")),
      ).toEqual([]);
      for (const h of hosts) expect(await h.calls(1, manifest.hash, true)).toEqual(["quarantined"]);
      const strikes = hosts.reduce((n, h) => n + h.executor.seen.length, 0);
      expect(strikes).toBe(K);

      const [listed] = await b.quarantine.list({ tenantId: TENANT });
      expect(listed).toMatchObject({
        bundleHash: manifest.hash,
        strike: 1,
        failures: K,
        codes: ["timeout"],
        versions: [1],
      });
      expect([...(listed?.hosts ?? [])].sort()).toEqual(["host-a", "host-b", "host-c"]);

      const released = await c.quarantine.release({ tenantId: TENANT, version: 1, by: "ops" });
      expect(released).toMatchObject({ releasedBy: "ops", strike: 1 });
      const exited = await Promise.all(hosts.map((h) => h.next((e) => e.type === "quarantine.exited")));
      for (const e of exited) expect(e).toMatchObject({ releasedBy: "ops" });
      for (const h of hosts) expect(await h.calls(1, manifest.hash, false)).toEqual(["ok"]);
      expect(await a.quarantine.list({ tenantId: TENANT })).toEqual([]);
      expect((await a.quarantine.list({ tenantId: TENANT, all: true })).map((q) => q.releasedBy)).toEqual(["ops"]);
      const audit = await a.audit({ tenantId: TENANT });
      expect(audit.at(-1)).toMatchObject({ type: "release", version: 1, by: "ops", hash: manifest.hash });
      expect(audit.at(-1)?.detail).toMatch(/^quarantine lifted \(strike 1, until /);
      await expect(a.quarantine.release({ tenantId: TENANT, version: 1, by: "ops" })).rejects.toMatchObject({
        code: "not_found",
      });

      // The next entry anywhere doubles the cooldown: the fleet remembers the strike.
      await hosts[2]?.calls(K, manifest.hash, true);
      const again = await hosts[0]?.next((e) => fromFleet(e) && e.type === "quarantine.entered" && e.strike === 2);
      expect(again).toMatchObject({ strike: 2, cooldownMs: 60_000 });
    } finally {
      for (const h of hosts) await h.dispatcher.close();
      await cleanup();
    }
  });
});

describe("fleet-wide quarantine off the hot path", () => {
  it("refuses a malformed report before it reaches the book", async () => {
    const store = new MemoryBundleStore();
    const settings = { ...QUARANTINE, forgetAfterMs: 600_000 };
    const { manifest } = fakeBundle("hostile");
    const good = {
      tenantId: TENANT,
      bundleHash: manifest.hash,
      host: "h",
      failures: [{ at: 1, code: "timeout" as const, weight: 1 }],
    };
    const bad = [
      { ...good, host: "evil\nhost" },
      { ...good, host: "" },
      { ...good, tenantId: "../etc" },
      { ...good, bundleHash: "sha256-nope" },
      { ...good, failures: [] },
      { ...good, failures: [{ at: Number.NaN, code: "timeout", weight: 1 }] },
      { ...good, failures: [{ at: 1, code: "threw", weight: 1 }] },
      { ...good, failures: [{ at: 1, code: "timeout", weight: 0 }] },
    ];
    for (const report of bad) {
      await expect(store.quarantine.report(report as never, settings)).rejects.toMatchObject({
        code: expect.stringMatching(/^invalid_(input|tenant)$/),
      });
    }
    expect(await store.quarantine.report(good, settings)).toBeUndefined();
  });

  it("writes nothing for healthy calls, and batches a burst of failures into one report", async () => {
    const store = new MemoryBundleStore();
    const reports: number[] = [];
    const ledger: QuarantineLedger = {
      report: (report, settings) => {
        reports.push(report.failures.length);
        return store.quarantine.report(report, settings);
      },
      watch: (listener) => store.quarantine.watch(listener),
    };
    const host = new Host("solo", ledger);
    const { manifest } = fakeBundle("healthy");
    try {
      await host.calls(200, manifest.hash, false);
      expect(reports).toEqual([]);
      const run = host.dispatcher.openRun({
        tenantId: TENANT,
        runId: RunId.parse("run-burst"),
        bundle: bundleOf(["tool.call"], { hash: manifest.hash }),
      });
      host.executor.respondWith(() => sandboxFailed("timeout", 60, 60));
      await Promise.all([0, 1, 2].map(() => run.dispatch("tool.call", toolCallEvent())));
      // Closing reports what is left: by then every failure went to the store.
      await host.dispatcher.close();
      expect(reports.reduce((a, b) => a + b, 0)).toBe(3);
      expect(reports.length).toBeLessThanOrEqual(2);
    } finally {
      await host.dispatcher.close();
    }
  });

  it("runs a bundle that has not yet made a healthy call one call at a time, each after the store counted the last strike", async () => {
    const store = new MemoryBundleStore();
    const held: (() => void)[] = [];
    const ledger: QuarantineLedger = {
      report: async (report, settings) => {
        await new Promise<void>((resolve) => held.push(resolve));
        return store.quarantine.report(report, settings);
      },
      watch: (listener) => store.quarantine.watch(listener),
    };
    const host = new Host("gated", ledger);
    const { manifest } = fakeBundle("spins-at-once");
    try {
      const run = host.dispatcher.openRun({
        tenantId: TENANT,
        runId: RunId.parse("run-gated"),
        bundle: bundleOf(["tool.call"], { hash: manifest.hash }),
      });
      host.executor.respondWith(() => sandboxFailed("timeout", 60, 60));
      const calls = Promise.all([0, 1, 2].map(() => run.dispatch("tool.call", toolCallEvent())));
      for (let seen = 1; seen <= 3; seen++) {
        // One call in the sandbox; the next waits for the store's answer to its strike.
        while (held.length === 0) await new Promise((resolve) => setImmediate(resolve));
        expect(host.executor.seen).toHaveLength(seen);
        held.shift()?.();
      }
      await calls;
      expect(host.executor.seen).toHaveLength(3);
      // A healthy call makes the bundle trusted: calls then start side by side.
      host.executor.respondWith(() => returned(undefined));
      await run.dispatch("tool.call", toolCallEvent());
      const waiting: (() => void)[] = [];
      host.executor.respondWith(() => new Promise((resolve) => waiting.push(() => resolve(returned(undefined)))));
      const side = [1, 2, 3].map((i) =>
        host.dispatcher
          .openRun({
            tenantId: TENANT,
            runId: RunId.parse(`run-side-${i}`),
            bundle: bundleOf(["tool.call"], { hash: manifest.hash }),
          })
          .dispatch("tool.call", toolCallEvent()),
      );
      for (let i = 0; i < 1_000 && waiting.length < 3; i++) await new Promise((resolve) => setImmediate(resolve));
      expect(waiting).toHaveLength(3);
      for (const respond of waiting) respond();
      await Promise.all(side);
    } finally {
      for (const release of held) release();
      await host.dispatcher.close();
    }
  });

  it("keeps deciding on the local book while the store is unreachable, and reports the failures when it is back", async () => {
    const store = new MemoryBundleStore();
    let down = true;
    const ledger: QuarantineLedger = {
      report: async (report, settings) => {
        if (down) throw new Error("connection refused");
        return store.quarantine.report(report, settings);
      },
      watch: (listener) => store.quarantine.watch(listener),
    };
    const host = new Host("cut-off", ledger);
    const other = new Host("other", store.quarantine);
    const { manifest } = fakeBundle("flaky");
    try {
      // Alone, the host quarantines at K of its own failures, store or not.
      expect(await host.calls(K + 1, manifest.hash, true)).toEqual([...Array(K).fill("timeout"), "quarantined"]);
      expect(await host.next((e) => e.type === "quarantine.entered")).toMatchObject({ origin: "host" });
      expect(await store.quarantine.list()).toEqual([]);
      down = false;
      // The retry reports them: the store's book (and so every host) has the entry.
      const seen = await other.next(fromFleet);
      expect(seen).toMatchObject({ origin: "fleet", hosts: ["cut-off"] });
      expect(await other.calls(1, manifest.hash, false)).toEqual(["quarantined"]);
    } finally {
      await host.dispatcher.close();
      await other.dispatcher.close();
    }
  });
});
