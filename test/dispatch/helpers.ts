import {
  type ActiveBundle,
  BundleHash,
  type FailureCode,
  type HookExecutor,
  type HookPoint,
  type JsonValue,
  RunId,
  type SandboxBundle,
  type SandboxCall,
  type SandboxResult,
  TenantId,
} from "../../src/protocol/index.js";

export const TENANT = TenantId.parse("acme");
export const RUN = RunId.parse("run-1");
export const HASH = BundleHash.parse(`sha256-${"a".repeat(64)}`);

export function bundleOf(
  points: HookPoint[],
  options: { version?: number; config?: JsonValue; hash?: string } = {},
): ActiveBundle {
  const hash = BundleHash.parse(options.hash ?? HASH);
  return {
    tenantId: TENANT,
    version: options.version ?? 3,
    code: "/* bundle */",
    manifest: { hash, bytes: 12, hookPoints: points, sdkVersion: "1", entry: "hooks/test" },
    config: options.config ?? { limit: 10 },
  };
}

/** A sandbox call as the fake executor saw it, with event and ctx parsed back for assertions. */
export interface SeenCall {
  readonly bundle: SandboxBundle;
  readonly call: SandboxCall;
  readonly point: HookPoint;
  readonly event: Record<string, unknown>;
  readonly ctx: Record<string, unknown> & { state: Record<string, unknown> };
}

export type Respond = (seen: SeenCall, signal: AbortSignal | undefined) => SandboxResult | Promise<SandboxResult>;

/** A HookExecutor that answers from a function: canned replies and failures, no sandbox. */
export class FakeExecutor implements HookExecutor {
  readonly mode = "inline";
  readonly seen: SeenCall[] = [];
  #respond: Respond;

  constructor(respond: Respond) {
    this.#respond = respond;
  }

  respondWith(respond: Respond): void {
    this.#respond = respond;
  }

  async execute(bundle: SandboxBundle, call: SandboxCall, signal?: AbortSignal): Promise<SandboxResult> {
    signal?.throwIfAborted();
    const seen: SeenCall = {
      bundle,
      call,
      point: call.point as HookPoint,
      event: JSON.parse(call.eventJson),
      ctx: JSON.parse(call.ctxJson),
    };
    this.seen.push(seen);
    return this.#respond(seen, signal);
  }

  async describe(): Promise<never> {
    throw new Error("not used by the dispatcher");
  }

  async close(): Promise<void> {}
}

/** The guest reply for a handler that returned `result` (undefined = nothing). */
export function returned(
  result: unknown,
  extra: { state?: unknown; logs?: string[]; runMs?: number; cpuMs?: number } = {},
): SandboxResult {
  const reply: Record<string, unknown> = { kind: "returned", result: result ?? null, logs: extra.logs ?? [] };
  if (extra.state !== undefined) reply.state = extra.state;
  return {
    type: "replied",
    reply: JSON.stringify(reply),
    cpuMs: extra.cpuMs ?? 0.5,
    runMs: extra.runMs ?? 1,
  };
}

/** A guest-side failure reported by the prelude (threw, pending, result_too_large, invalid_result). */
export function guestFailed(
  code: "threw" | "pending" | "result_too_large" | "invalid_result",
  message = "boom",
): SandboxResult {
  return {
    type: "replied",
    reply: JSON.stringify({ kind: "failed", code, message, logs: ["before the throw"] }),
    cpuMs: 1,
    runMs: 2,
  };
}

/** A sandbox-side failure (timeout, memory_limit, sandbox_crashed, unavailable …). */
/**
 * A failure the sandbox reported. A `timeout` used the default 50 ms timeout's CPU time unless `cpuMs` says
 * otherwise (a wall-clock backstop: less), so that quarantine counts it.
 */
export function sandboxFailed(code: FailureCode, runMs = 50, cpuMs = code === "timeout" ? 50 : runMs): SandboxResult {
  return { type: "failed", failure: { code, message: `sandbox said ${code}` }, cpuMs, runMs };
}

export class FakeClock {
  now = 1_000_000;
  readonly read = (): number => this.now;
  advance(ms: number): void {
    this.now += ms;
  }
}

export const toolCallEvent = (args: Record<string, JsonValue> = { path: "/tmp/x" }) => ({
  call: { id: "c1", name: "shell", args },
  batch: { index: 0, size: 1 },
});
