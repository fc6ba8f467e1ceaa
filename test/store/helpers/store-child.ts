/**
 * A separate process that writes to a store, for the cross-process tests. argv[2] is a JSON command;
 * each result is printed as one JSON line. `path` is a SQLite file or a postgres:// URL. `crashAt`
 * SIGKILLs this process inside the upload transaction. `watch` serves `active()` like a host and prints
 * each version change it sees with the time it saw it.
 */

import type { TenantId } from "../../../src/protocol/index.js";
import {
  type BundleStore,
  PostgresBundleStore,
  SqliteBundleStore,
  storeLocation,
  type UploadStep,
} from "../../../src/store/index.js";
import { fakeBundle } from "./bundles.js";

type ChildCommand =
  | {
      op: "upload";
      path: string;
      tenantId: string;
      labels: string[];
      activate?: boolean;
      crashAt?: UploadStep;
      barrier?: boolean;
    }
  | { op: "activate"; path: string; tenantId: string; version: number }
  | { op: "rollback"; path: string; tenantId: string }
  | { op: "watch"; path: string; tenantId: string; changes: number; pollMs: number };

const command = JSON.parse(process.argv[2] ?? "{}") as ChildCommand;
const onUploadStep = (step: UploadStep) => {
  if (command.op === "upload" && step === command.crashAt) process.kill(process.pid, "SIGKILL");
};
const store: BundleStore =
  storeLocation(command.path).kind === "postgres"
    ? await PostgresBundleStore.open(command.path, { onUploadStep, refreshMs: 60_000 })
    : await SqliteBundleStore.open(command.path, { busyTimeoutMs: 20_000, onUploadStep });
const tenantId = command.tenantId as TenantId;
const wallNow = () => performance.timeOrigin + performance.now();
if (command.op === "upload" && command.barrier === true) {
  // Tell the parent the store is open, then wait for its go so all children write at the same time.
  process.stdout.write(`${JSON.stringify({ ready: true })}\n`);
  await new Promise((resolve) => process.stdin.once("data", resolve));
  process.stdin.pause();
}
switch (command.op) {
  case "upload":
    for (const label of command.labels) {
      const result = await store.upload({
        tenantId,
        ...fakeBundle(label),
        by: `child-${process.pid}`,
        activate: command.activate === true,
      });
      process.stdout.write(`${JSON.stringify({ label, version: result.version.version })}\n`);
    }
    break;
  case "activate":
    process.stdout.write(
      `${JSON.stringify(await store.activate({ tenantId, version: command.version, by: "child" }))}\n`,
    );
    break;
  case "rollback":
    process.stdout.write(`${JSON.stringify(await store.rollback({ tenantId, by: "child" }))}\n`);
    break;
  case "watch": {
    let seen = (await store.active(tenantId))?.version;
    process.stdout.write(`${JSON.stringify({ ready: true })}\n`);
    for (let changes = 0; changes < command.changes; ) {
      await new Promise((resolve) => setTimeout(resolve, command.pollMs));
      const version = (await store.active(tenantId))?.version;
      if (version === seen) continue;
      seen = version;
      changes++;
      process.stdout.write(`${JSON.stringify({ version, at: wallNow() })}\n`);
    }
    break;
  }
  default: {
    const never: never = command;
    throw new Error(`unknown command ${JSON.stringify(never)}`);
  }
}
await store.close();
