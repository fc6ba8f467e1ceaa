import { describe, expect, it } from "vitest";
import type { BundleHash, TenantId } from "../../src/protocol/index.js";
import { ActiveBundleCache, type ActiveHead } from "../../src/store/active-cache.js";
import { StoreError, type StoreEvent } from "../../src/store/index.js";
import { fakeBundle } from "./helpers/bundles.js";

const acme = "acme" as TenantId;
const globex = "globex" as TenantId;
const v1 = fakeBundle("v1");
const v2 = fakeBundle("v2");

/** A reader over a mutable "database": `down` makes every read fail as a lost connection would. */
function fakeStore(now: () => number = () => 0) {
  const db = { heads: new Map<TenantId, ActiveHead>([[acme, { version: 1, hash: v1.manifest.hash, config: {} }]]) };
  const state = { down: false, reads: 0, gate: undefined as Promise<void> | undefined };
  const code = new Map([v1, v2].map((b) => [b.manifest.hash, { code: b.code, manifest: b.manifest, bytes: 10 }]));
  const events: StoreEvent[] = [];
  const cache = new ActiveBundleCache(
    {
      head: async (tenantId) => {
        state.reads++;
        const answer = db.heads.get(tenantId);
        await state.gate;
        if (state.down) throw new StoreError("unavailable", "Cannot reach the PostgreSQL store (test)");
        return answer;
      },
      code: (hash: BundleHash) => {
        const found = code.get(hash);
        return found && { ...found, sourceMap: null };
      },
    },
    { onEvent: (e) => events.push(e), now, refreshMs: 500 },
  );
  const activate = (tenantId: TenantId, version: number) =>
    db.heads.set(tenantId, { version, hash: (version === 1 ? v1 : v2).manifest.hash, config: {} });
  return { cache, state, events, activate };
}

describe("ActiveBundleCache", () => {
  it("serves a fresh head from memory without reading again", async () => {
    const { cache, state } = fakeStore();
    expect((await cache.get(acme))?.version).toBe(1);
    expect(cache.get(acme)).toMatchObject({ version: 1 });
    expect(state.reads).toBe(1);
  });

  it("serves the last known version when a stale head cannot be re-read, and says so once", async () => {
    const { cache, state, events, activate } = fakeStore();
    await cache.get(acme);
    activate(acme, 2);
    cache.invalidate(acme);
    state.down = true;
    expect((await cache.get(acme))?.version).toBe(1);
    expect((await cache.get(acme))?.version).toBe(1);
    expect(events).toEqual([{ type: "store.unreachable", store: "postgres", reason: expect.stringContaining("test") }]);
    const never = await Promise.resolve(cache.get(globex)).catch((e: unknown) => e);
    expect((never as StoreError).code).toBe("unavailable");
    state.down = false;
    cache.health.restored();
    expect((await cache.get(acme))?.version).toBe(2);
    expect(events.map((e) => e.type)).toEqual(["store.unreachable", "store.reachable"]);
  });

  it("tries a store that failed a read again in the background once per refreshMs, and recovers by itself", async () => {
    let now = 0;
    const { cache, state, events, activate } = fakeStore(() => now);
    await cache.get(acme);
    activate(acme, 2);
    cache.invalidate(acme);
    state.down = true;
    expect((await cache.get(acme))?.version).toBe(1);
    const reads = state.reads;
    state.down = false;
    now += 499;
    expect(cache.get(acme)).toMatchObject({ version: 1 });
    expect(state.reads).toBe(reads);
    now += 1;
    expect(cache.get(acme)).toMatchObject({ version: 1 });
    expect(state.reads).toBe(reads + 1);
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(cache.get(acme)).toMatchObject({ version: 2 });
    expect(events.map((e) => e.type)).toEqual(["store.unreachable", "store.reachable"]);
  });

  it("does not trust an answer read while an invalidation arrived", async () => {
    const { cache, state, activate } = fakeStore();
    let open: () => void = () => {};
    state.gate = new Promise((resolve) => {
      open = resolve;
    });
    const reading = cache.get(acme);
    activate(acme, 2);
    cache.invalidate(acme);
    open();
    state.gate = undefined;
    expect((await reading)?.version).toBe(1);
    expect((await cache.get(acme))?.version).toBe(2);
  });

  it("does not join a read that began before a write: the writer's next get sees its change", async () => {
    const { cache, state, activate } = fakeStore();
    let open: () => void = () => {};
    state.gate = new Promise((resolve) => {
      open = resolve;
    });
    // A refresh (a notification) starts a read; the store's own write lands and invalidates meanwhile.
    const before = cache.get(acme);
    activate(acme, 2);
    cache.invalidate(acme);
    const after = cache.get(acme);
    open();
    state.gate = undefined;
    expect((await before)?.version).toBe(1);
    expect((await after)?.version).toBe(2);
    expect(state.reads).toBe(2);
  });

  it("re-reads a served tenant at once on refresh, and leaves tenants it never served alone", async () => {
    const { cache, state, activate } = fakeStore();
    await cache.get(acme);
    activate(acme, 2);
    cache.refresh(acme);
    cache.refresh(globex);
    expect(state.reads).toBe(2);
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(cache.get(acme)).toMatchObject({ version: 2 });
  });

  it("passes on failures other than a lost connection", async () => {
    const cache = new ActiveBundleCache({
      head: () => {
        throw new StoreError("corrupt", "damaged");
      },
      code: () => undefined,
    });
    const error = await Promise.resolve(cache.get(acme)).catch((e: unknown) => e);
    expect((error as StoreError).code).toBe("corrupt");
  });

  it("takes the code of a version it has not run from the head's own read, naming the hashes it has", async () => {
    const heads = new Map<TenantId, ActiveHead>([[acme, { version: 1, hash: v1.manifest.hash, config: {} }]]);
    const code = new Map([v1, v2].map((b) => [b.manifest.hash, { code: b.code, manifest: b.manifest, bytes: 10 }]));
    const asked: (readonly BundleHash[])[] = [];
    let codeReads = 0;
    const cache = new ActiveBundleCache({
      head: () => expect.unreachable("a combined read is used when the store has one"),
      code: () => {
        codeReads++;
        return undefined;
      },
      headAndCode: async (tenantId, known) => {
        asked.push(known);
        const head = heads.get(tenantId);
        if (head === undefined) return undefined;
        const found = known.includes(head.hash) ? undefined : code.get(head.hash);
        return { head, code: new Map(found ? [[head.hash, { ...found, sourceMap: null }]] : []) };
      },
    });
    expect((await cache.get(acme))?.code).toBe(v1.code);
    heads.set(acme, { version: 2, hash: v2.manifest.hash, config: {} });
    cache.refresh(acme);
    expect((await cache.get(acme))?.code).toBe(v2.code);
    expect(asked).toEqual([[], [v1.manifest.hash]]);
    expect(codeReads).toBe(0);
  });

  it("serves a notified head without a read when it has the code of its versions, and reads when it has not", async () => {
    const { cache, state, activate } = fakeStore();
    await cache.get(acme);
    const head2 = { version: 2, hash: v2.manifest.hash, config: { strict: true } };
    // v2's code was never loaded here: the head is read, with its code.
    activate(acme, 2);
    cache.apply(acme, head2);
    expect(state.reads).toBe(2);
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(cache.get(acme)).toMatchObject({ version: 2 });
    // From here the heads come from the notifications alone (the fake database stays at v2).
    cache.apply(acme, { version: 1, hash: v1.manifest.hash, config: {} });
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(cache.get(acme)).toMatchObject({ version: 1 });
    cache.apply(acme, head2);
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(cache.get(acme)).toMatchObject({ version: 2, config: { strict: true } });
    expect(state.reads).toBe(2);
    // A tenant this host never served is left alone.
    cache.apply(globex, head2);
    expect(state.reads).toBe(2);
  });

  it("keeps a notified head over a read that began before it and ends after it", async () => {
    const { cache, state, activate } = fakeStore();
    await cache.get(acme);
    activate(acme, 2);
    cache.invalidate(acme);
    await cache.get(acme);
    let open: () => void = () => undefined;
    state.gate = new Promise((resolve) => (open = resolve));
    activate(acme, 1);
    cache.invalidate(acme);
    const slow = Promise.resolve(cache.get(acme));
    cache.apply(acme, { version: 2, hash: v2.manifest.hash, config: {} });
    await new Promise((resolve) => setTimeout(resolve, 0));
    open();
    state.gate = undefined;
    await slow;
    expect(cache.get(acme)).toMatchObject({ version: 2 });
  });
});
