/**
 * Item 6 of issue 16: a store whose -wal, -shm or -journal file is a symlink (to a host file) or a FIFO.
 * SQLite itself opens them with O_NOFOLLOW (a symlink fails as a bare "unable to open database file") and
 * would open a FIFO; the store refuses both before SQLite opens anything, saying which file and what to do.
 */
import { execFileSync } from "node:child_process";
import { mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { TenantId } from "../../src/protocol/index.js";
import { SqliteBundleStore } from "../../src/store/index.js";
import { fakeBundle } from "../store/helpers/bundles.js";

let dir: string;
let store: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "isohook-companions-"));
  store = join(dir, "store.db");
  const opened = await SqliteBundleStore.open(store);
  await opened.upload({ tenantId: "acme" as TenantId, ...fakeBundle("a1"), by: "ops", activate: true });
  await opened.close();
  await writeFile(join(dir, "host.txt"), "precious host data\n");
});
afterEach(() => rm(dir, { recursive: true, force: true }));

describe("a store's companion files", () => {
  it.each(["-wal", "-shm", "-journal"])(
    "refuses a %s symlink to a host file and leaves that file alone",
    async (suffix) => {
      await symlink(join(dir, "host.txt"), `${store}${suffix}`);
      await expect(SqliteBundleStore.open(store)).rejects.toMatchObject({
        code: "unsafe_companion",
        message: expect.stringContaining(
          `The store's ${suffix} file ${store}${suffix} is a symbolic link: SQLite would write through it.`,
        ),
      });
      expect(await readFile(join(dir, "host.txt"), "utf8")).toBe("precious host data\n");
    },
  );

  it("refuses a FIFO as the -wal file", async () => {
    execFileSync("mkfifo", [`${store}-wal`]);
    await expect(SqliteBundleStore.open(store, { create: false })).rejects.toMatchObject({
      code: "unsafe_companion",
      message: expect.stringContaining("is not a regular file"),
    });
  });

  it("opens a store whose companions are its own regular files", async () => {
    const opened = await SqliteBundleStore.open(store);
    expect((await opened.active("acme" as TenantId))?.version).toBe(1);
    await opened.close();
  });
});
