import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { TenantId } from "../../src/protocol/index.js";
import { APPLICATION_ID, type BundleStore, type DecisionRow, SqliteBundleStore } from "../../src/store/index.js";
import { MIGRATIONS, SCHEMA_VERSION } from "../../src/store/schema.js";
import { fakeBundle } from "./helpers/bundles.js";
import { rejection } from "./helpers/rejection.js";
import { storeFactories } from "./helpers/store-factories.js";

const acme = "acme" as TenantId;
const globex = "globex" as TenantId;
const T0 = 1_700_000_000_000;
let clock = 0;
const tick = () => T0 + ++clock * 1000;
const options = { clock: tick, maxBundleBytes: 4096 };

const factories = await storeFactories(options);

function row(tenantId: TenantId, n: number, extra: Partial<DecisionRow> = {}): DecisionRow {
  const event = JSON.stringify({ call: { id: `c${n}`, name: "shell", args: { command: `echo ${n}` } } });
  return {
    tenantId,
    at: T0 + n * 60_000,
    runId: `run_${n}`,
    turn: n % 3,
    point: "tool.call",
    version: 1,
    hash: `sha256-${"a".repeat(64)}`,
    event,
    eventChars: event.length,
    truncated: false,
    ctx: '{"state":{}}',
    record: '{"outcome":{"type":"decided","result":null}}',
    shadow: null,
    ...extra,
  };
}

const settings = {
  sample: 0.5,
  mask: [{ path: "event.call.args.password", action: "drop" as const }],
  retainDays: 3,
  retain: 100,
};

describe.each(factories)("decision log store contract (%s)", (_name, open) => {
  let store: BundleStore;
  let cleanup: () => Promise<void>;
  beforeEach(async () => {
    clock = 0;
    ({ store, cleanup } = await open());
  });
  afterEach(async () => {
    await store.close();
    await cleanup();
  });

  it("keeps a tenant's settings while its log is on and audits each change", async () => {
    expect(await store.logSettings(acme)).toEqual([]);
    const on = await store.setLogSettings({ tenantId: acme, settings, by: "ops" });
    expect(on).toEqual({ tenantId: acme, settings, previous: null });
    const [stored] = await store.logSettings();
    expect(stored).toMatchObject({ tenantId: "acme", ...settings, updatedBy: "ops" });
    const off = await store.setLogSettings({ tenantId: acme, settings: null, by: "bob" });
    expect(off.previous).toEqual(settings);
    expect(await store.logSettings()).toEqual([]);
    const audit = await store.audit({ tenantId: acme });
    expect(audit.map((e) => [e.type, e.version, e.by, e.detail])).toEqual([
      ["log", null, "ops", "on sample 0.5, drop event.call.args.password, retain 3 d / 100"],
      ["log", null, "bob", "off"],
    ]);
  });

  it("refuses settings out of range and mask paths outside event, ctx and result", async () => {
    const bad = [
      { ...settings, sample: 0 },
      { ...settings, sample: 1.5 },
      { ...settings, retainDays: 0 },
      { ...settings, retain: 2_000_000 },
      { ...settings, mask: [{ path: "call.args.password", action: "drop" as const }] },
      { ...settings, mask: [{ path: "event.call.\u001b[2J", action: "drop" as const }] },
    ];
    for (const s of bad) {
      expect(await rejection(store.setLogSettings({ tenantId: acme, settings: s, by: "ops" }))).toMatchObject({
        code: "invalid_input",
      });
    }
    expect(await store.audit({ tenantId: acme })).toEqual([]);
  });

  it("appends records and lists the last ones of a tenant oldest first, by point and time", async () => {
    await store.appendDecisions([1, 2, 3, 4].map((n) => row(acme, n)));
    await store.appendDecisions([
      row(globex, 5),
      row(acme, 6, { point: "tool.result", truncated: true, eventChars: 9999, shadow: "{}" }),
    ]);
    const all = await store.decisions({ tenantId: acme });
    expect(all.map((d) => d.runId)).toEqual(["run_1", "run_2", "run_3", "run_4", "run_6"]);
    expect(all[0]).toMatchObject({
      tenantId: "acme",
      turn: 1,
      point: "tool.call",
      version: 1,
      truncated: false,
      shadow: null,
    });
    expect(all[0]?.at).toBe(new Date(T0 + 60_000).toISOString());
    expect(all[4]).toMatchObject({ point: "tool.result", truncated: true, eventChars: 9999, shadow: "{}" });
    expect((await store.decisions({ tenantId: acme, limit: 2 })).map((d) => d.runId)).toEqual(["run_4", "run_6"]);
    expect((await store.decisions({ tenantId: acme, point: "tool.result" })).map((d) => d.runId)).toEqual(["run_6"]);
    const since = await store.decisions({ tenantId: acme, since: T0 + 3 * 60_000 });
    expect(since.map((d) => d.runId)).toEqual(["run_3", "run_4", "run_6"]);
    expect(await rejection(store.decisions({ tenantId: acme, limit: 0 }))).toMatchObject({ code: "invalid_input" });
  });

  it("keeps every field of a batch exact, in order, whatever text a run id or a record holds", async () => {
    const awkward = [
      row(acme, 1, { runId: "13:run,\t:-1:", ctx: '{"config":"a:b","state":{"k":"\u00e9\ud83d\ude00"}}' }),
      row(acme, 2, { shadow: '{"outcome":{"type":"failed"}}', truncated: true, event: '{"a":"12:', eventChars: 4242 }),
      row(acme, 3, { runId: "-1:", record: "null" }),
      // What an array literal would misread: braces, quotes, commas, backslashes, NULL.
      row(acme, 4, {
        runId: "NULL",
        event: '{"q":"\\"},{NULL","b":"\\\\"}',
        ctx: "{}",
        record: 'NULL,"{"',
        shadow: "",
      }),
    ];
    expect(await store.appendDecisions(awkward)).toBe(4);
    const stored = await store.decisions({ tenantId: acme });
    expect(stored.map(({ id: _, at, ...rest }) => ({ ...rest, at: Date.parse(at) }))).toEqual(awkward);
  });

  it("prunes a tenant's records by age and by count, newest kept", async () => {
    await store.appendDecisions([1, 2, 3, 4, 5, 6].map((n) => row(acme, n)));
    await store.appendDecisions([row(globex, 1)]);
    expect(await store.pruneDecisions({ tenantId: acme, before: T0 + 2 * 60_000, keep: 1000 })).toBe(1);
    expect(await store.pruneDecisions({ tenantId: acme, before: 0, keep: 2 })).toBe(3);
    expect((await store.decisions({ tenantId: acme })).map((d) => d.runId)).toEqual(["run_5", "run_6"]);
    expect(await store.decisions({ tenantId: globex })).toHaveLength(1);
  });

  it("keeps the bundle audit as it was", async () => {
    await store.upload({ tenantId: acme, ...fakeBundle("a1"), by: "ops", activate: true });
    const audit = await store.audit({ tenantId: acme });
    expect(audit.map((e) => [e.type, e.version, e.detail])).toEqual([
      ["upload", 1, null],
      ["activate", 1, null],
    ]);
  });
});

describe("SQLite migration 2", () => {
  it("keeps a version-1 store's audit and continues its ids", async () => {
    const dir = mkdtempSync(join(tmpdir(), "isohook-dlog-mig-"));
    try {
      const path = join(dir, "store.db");
      const db = new Database(path);
      db.pragma(`application_id = ${APPLICATION_ID}`);
      db.exec(MIGRATIONS[0]?.sql ?? "");
      db.prepare("INSERT INTO schema_version VALUES (1, 0)").run();
      db.prepare(
        "INSERT INTO audit (at, tenant_id, type, version, from_version, bundle_hash, by) VALUES (1, 'acme', 'delete', 3, NULL, NULL, 'old')",
      ).run();
      db.close();
      const store = await SqliteBundleStore.open(path, options);
      expect(store.migration).toEqual({ from: 1, to: SCHEMA_VERSION });
      await store.setLogSettings({ tenantId: acme, settings, by: "ops" });
      const audit = await store.audit();
      expect(audit.map((e) => [e.id, e.type, e.version, e.by])).toEqual([
        [1, "delete", 3, "old"],
        [2, "log", null, "ops"],
      ]);
      await store.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
