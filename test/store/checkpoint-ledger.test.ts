import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { TenantId } from "../../src/protocol/index.js";
import { type BundleStore, MemoryBundleStore, PostgresBundleStore, SqliteBundleStore } from "../../src/store/index.js";
import { dropSchema, freshSchema, pgUrl, postgresAvailable } from "./helpers/postgres.js";
import { rejection } from "./helpers/rejection.js";

/** Two handles on one store (two hosts, or two processes' stores on one file), and their cleanup. */
type Pair = () => Promise<{ a: BundleStore; b: BundleStore; cleanup: () => Promise<void> }>;

const pairs: [string, Pair][] = [
  [
    "memory",
    async () => {
      const store = new MemoryBundleStore();
      return { a: store, b: store, cleanup: async () => {} };
    },
  ],
  [
    "sqlite",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "isohook-ledger-"));
      const a = await SqliteBundleStore.open(join(dir, "store.db"));
      const b = await SqliteBundleStore.open(join(dir, "store.db"));
      return {
        a,
        b,
        cleanup: async () => {
          await a.close();
          await b.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  ],
];
if (await postgresAvailable()) {
  pairs.push([
    "postgres",
    async () => {
      const schema = freshSchema();
      const a = await PostgresBundleStore.open(pgUrl(schema));
      const b = await PostgresBundleStore.open(pgUrl(schema));
      return {
        a,
        b,
        cleanup: async () => {
          await a.close();
          await b.close();
          await dropSchema(schema);
        },
      };
    },
  ]);
}

const acme = TenantId.parse("acme");
const claim = (id: string, expiresAt = Date.now() + 60_000) => ({ id, tenantId: acme, runId: "run_1", expiresAt });

describe.each(pairs)("checkpoint ledger (%s)", (_name, pair) => {
  it("records a checkpoint id once for every handle on the store", async () => {
    const { a, b, cleanup } = await pair();
    try {
      const id = randomUUID();
      expect(await a.checkpoints.claim(claim(id))).toBe(true);
      expect(await b.checkpoints.claim(claim(id))).toBe(false);
      expect(await a.checkpoints.claim(claim(id.toUpperCase()))).toBe(false);
      expect(await b.checkpoints.claim(claim(randomUUID()))).toBe(true);
    } finally {
      await cleanup();
    }
  });

  it("lets exactly one of many concurrent claims of one id through", async () => {
    const { a, b, cleanup } = await pair();
    try {
      const id = randomUUID();
      const answers = await Promise.all(
        Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? a : b).checkpoints.claim(claim(id))),
      );
      expect(answers.filter(Boolean)).toHaveLength(1);
    } finally {
      await cleanup();
    }
  });

  it("forgets ids whose checkpoint expired, and refuses a malformed claim", async () => {
    const { a, b, cleanup } = await pair();
    try {
      const id = randomUUID();
      expect(await a.checkpoints.claim(claim(id, Date.now() - 1_000))).toBe(true);
      // The next claim prunes it: an expired checkpoint is refused by the runtime before it gets here.
      expect(await b.checkpoints.claim(claim(id))).toBe(true);
      expect((await rejection(a.checkpoints.claim(claim("not-a-uuid")))).code).toBe("invalid_input");
      expect((await rejection(a.checkpoints.claim(claim(randomUUID(), Number.NaN)))).code).toBe("invalid_input");
    } finally {
      await cleanup();
    }
  });
});
