/**
 * A separate process that writes to a store, for the cross-process tests. argv[2] is a JSON command;
 * each result is printed as one JSON line. `path` is a SQLite file or a postgres:// URL. `crashAt`
 * SIGKILLs this process inside the upload transaction.
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
  | { op: "rollout"; path: string; tenantId: string; version: number; percent: number }
  | { op: "shadow"; path: string; tenantId: string; version: number | null };

const command = JSON.parse(process.argv[2] ?? "{}") as ChildCommand;
const onUploadStep = (step: UploadStep) => {
  if (command.op === "upload" && step === command.crashAt) process.kill(process.pid, "SIGKILL");
};
const store: BundleStore =
  storeLocation(command.path).kind === "postgres"
    ? await PostgresBundleStore.open(command.path, { onUploadStep, refreshMs: 60_000 })
    : await SqliteBundleStore.open(command.path, { busyTimeoutMs: 20_000, onUploadStep });
const tenantId = command.tenantId as TenantId;
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
  case "rollout": {
    const { version, percent } = command;
    process.stdout.write(`${JSON.stringify(await store.rollout({ tenantId, version, percent, by: "child" }))}\n`);
    break;
  }
  case "shadow":
    process.stdout.write(
      `${JSON.stringify(await store.shadow({ tenantId, version: command.version, by: "child" }))}\n`,
    );
    break;
  default: {
    const never: never = command;
    throw new Error(`unknown command ${JSON.stringify(never)}`);
  }
}
await store.close();
