import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { SandboxBundle, SandboxCall, SandboxResult, TenantId } from "../../../../src/protocol/index.js";
import { BundleHash, TenantId as TenantIdSchema } from "../../../../src/protocol/index.js";

export const STAND_IN_WORKER = fileURLToPath(new URL("../fixtures/stand-in-worker.ts", import.meta.url));
export const STAND_IN_BUNDLE = { hash: BundleHash.parse(`sha256-${"b".repeat(64)}`), code: "stand-in" };

/** True while `pid` names a live process (a zombie counts as gone). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

/** Polls until `check` holds or `ms` passes; returns whether it held. */
export async function eventually(check: () => boolean, ms = 10_000): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return check();
}

/** A tenant id that `shardOf` puts on `slot`. */
export function tenantOn(shard: (tenantId: string) => number, slot: number, prefix = "tenant"): TenantId {
  for (let i = 0; ; i++) {
    const id = `${prefix}-${i}`;
    if (shard(id) === slot) return TenantIdSchema.parse(id);
  }
}

/** A call for the stand-in worker: the event picks what it does. */
export function standInCall(
  tenantId: TenantId,
  event: Record<string, unknown>,
  timeoutMs = 60_000,
  bundle: SandboxBundle = STAND_IN_BUNDLE,
): readonly [SandboxBundle, SandboxCall] {
  return [bundle, { tenantId, point: "tool.call", eventJson: JSON.stringify(event), ctxJson: "{}", timeoutMs }];
}

/** The stand-in's reply, parsed (tests only: the host never parses replies outside invokeHook). */
export function standInReply(outcome: SandboxResult): {
  pid: number;
  nonce?: unknown;
  timeoutMs: number;
  loaded: number;
  served: number;
} {
  if (outcome.type !== "replied") throw new Error(`expected a reply, got ${JSON.stringify(outcome)}`);
  return JSON.parse(outcome.reply);
}
