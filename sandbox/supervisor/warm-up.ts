import { createHash } from "node:crypto";
import { BundleHash, type SandboxBundle, type SandboxCall, TenantId } from "../../src/protocol/index.js";
import type { WorkerProcess } from "./worker-process.js";

/** The sandbox's own hook (it does nothing): no tenant code. */
const CODE = "var __isohook_bundle = (() => ({ default: { toolCall() {} } }))();";
const BUNDLE: SandboxBundle = {
  hash: BundleHash.parse(`sha256-${createHash("sha256").update(CODE).digest("hex")}`),
  code: CODE,
};
const TENANT = TenantId.parse("isohook-warm-up");
const EVENT_JSON = JSON.stringify({ call: { id: "warm-up", name: "warm-up", args: {} }, batch: { index: 0, size: 1 } });
const CTX_JSON = JSON.stringify({
  tenantId: TENANT,
  runId: "warm-up",
  turn: 0,
  hookId: "platform:warm-up",
  bundle: { version: 1, hash: BUNDLE.hash },
  config: {},
  state: {},
});

/**
 * Runs one call of the sandbox's own empty hook on `worker` once it is ready, so that a tenant's first call
 * there does not pay for the worker's own first use (the prelude's first compile, the first spare isolates,
 * the CPU guard's threads): on a fresh worker that made the demo's first tenant call load for 41 ms instead
 * of 2. Every worker is warmed: the shards' (`ProcessExecutor.started` waits for theirs), the spare that
 * takes over calls held behind a long one (relief.ts) and replaces a crashed worker, the long-call worker.
 * Resolves when the call settled, however it ended (a worker that dies warming is the supervisor's matter).
 */
export async function warmUp(worker: WorkerProcess, timeoutMs: number): Promise<void> {
  const exit = await worker.started;
  if (exit !== undefined || !worker.accepting) return;
  const call: SandboxCall = {
    tenantId: TENANT,
    point: "tool.call",
    eventJson: EVENT_JSON,
    ctxJson: CTX_JSON,
    timeoutMs,
  };
  await worker.execute(BUNDLE, call, undefined).catch(() => undefined);
}

/** Why a pool's workers did not start: the signal, or a worker that exited or was never assigned. */
export type StartProblem = "aborted" | { readonly why: string; readonly detail: string };

/** Each worker's warm-up call (`warmUp`), settled or not: a pool's start waits for its shards'. */
export class WarmUps {
  readonly #calls = new WeakMap<WorkerProcess, Promise<void>>();

  start(worker: WorkerProcess, timeoutMs: number): void {
    this.#calls.set(worker, warmUp(worker, timeoutMs));
  }

  /** Waits until each slot's worker is ready, then warmed up; the first problem on the way, if any. */
  async ready(
    slots: readonly { readonly current: WorkerProcess | undefined }[],
    signal: AbortSignal | undefined,
  ): Promise<StartProblem | undefined> {
    const aborted = new Promise<"aborted">((resolve) => {
      if (signal?.aborted) resolve("aborted");
      signal?.addEventListener("abort", () => resolve("aborted"), { once: true });
    });
    for (const slot of slots) {
      const worker = slot.current;
      const result = worker === undefined ? undefined : await Promise.race([worker.started, aborted]);
      if (result === "aborted") return result;
      if (worker === undefined || result !== undefined) {
        const why =
          result === undefined ? "it was not assigned" : `it exited (${result.signal ?? `code ${result.exitCode}`})`;
        return { why, detail: worker?.stderr.text.trim() ?? "" };
      }
    }
    for (const slot of slots) {
      const warming = slot.current === undefined ? undefined : this.#calls.get(slot.current);
      if (warming !== undefined && (await Promise.race([warming, aborted])) === "aborted") return "aborted";
    }
    return undefined;
  }
}
