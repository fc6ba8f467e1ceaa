import {
  type BundleHash,
  isHookPoint,
  loadTimeoutOf,
  type SandboxCall,
  type SandboxLimits,
  type SandboxResult,
  type TenantId,
  type WorkerFailureCode,
} from "../../src/protocol/index.js";
import { type CpuGuard, cpuGuard } from "./cpu-guard.js";
import { callBackstopMs } from "./cpu-stretch.js";
import { PoolClosedError, SandboxOptionsError } from "./errors.js";
import { IsolateCache, IsolateKeys } from "./isolate-cache.js";
import { callTimeoutMessage, classifyIsolateError } from "./isolate-error.js";
import { disposeQuietly, type LoadedBundle, openIsolate, remaining } from "./open-isolate.js";
import { resolvePoolOptions } from "./pool-options.js";
import type { IsolatePoolOptions, PhaseListener, PoolStats } from "./pool-types.js";
import { preludeScript } from "./prelude-script.js";
import { SpareIsolates } from "./spare-isolates.js";
import { callClock, callCpuMs, THREAD_CPU_CLOCK, TICK_SAFE_MS } from "./thread-cpu.js";

const DESCRIBE_TIMEOUT_MS = 1_000;
/** The thread's clock is the CPU guard's watcher's too: a call's start read here is never early there. */
const SCHEDSTAT = THREAD_CPU_CLOCK === "schedstat";

type PoolResult = SandboxResult<WorkerFailureCode>;

/**
 * The in-process isolate manager: one V8 isolate per (tenant, bundle hash), created lazily on the first
 * call, bundle compiled once, one long-lived context. Every call is one synchronous `applySync`, strings in
 * and one string out (docs/architecture.md, "The trust boundary"); an async handler takes a second `applySync` to
 * collect its settled reply. The call's `timeoutMs` is CPU time of this thread (thread-cpu.ts): `applySync` gets a
 * wall-clock backstop sized by the machine's load (cpu-stretch.ts), and a call whose CPU time passed its timeout fails
 * `timeout` whether the backstop stopped it or it finished (docs/architecture.md, "Timeouts: CPU time,
 * wall-clock backstop"). Used by the worker process main and by the inline executor. The pool keeps
 * the bundles and runs calls; opening an isolate is open-isolate.ts, the live isolates and their eviction
 * isolate-cache.ts.
 *
 * ```ts
 * const pool = new IsolatePool({ maxIsolates: 128 });
 * pool.load(hash, code, { memoryMb: 32, maxResultChars: 65_536, maxStateChars: 16_384, maxLogLines: 50, maxLogChars:
 * 8_192 }); const r = pool.call(hash, { tenantId, point: "tool.call", eventJson, ctxJson, timeoutMs: 50 });
 * // r.type === "replied" → parseGuestReply(point, r.reply, limits) on the host
 * ```
 *
 * A cold call (no isolate for its tenant and bundle yet, or it was recycled or evicted) first loads the
 * bundle: isolate (a prepared spare if one is ready, prepared-isolate.ts), then the bundle compiled (from
 * this worker's own code cache of it after its first compile) and its top-level code run, bounded by the
 * bundle's load timeout (`SandboxLimits.loadTimeoutMs`, default `loadTimeoutOf`). The call's `timeoutMs`
 * then covers its handler only, so the first call after a recycle is not cut short by loading; the result
 * reports the load apart (`loadMs`). An isolate is disposed and recreated lazily after every timeout,
 * memory-limit event or error outside the prelude's control (docs/architecture.md, rule 9 of "Rules learned from
 * isolated-vm"); the load that recreates it is the tenant's doing and says so (`loadAfterRecycle`), as does the load
 * after one that failed on the bundle's code. There is no in-thread watchdog: `applySync` blocks this thread, so no
 * timer can fire during a call; what the `timeout` does not cover is stopped by killing the process (the supervisor's
 * deadline). Methods never throw for anything a guest does; they throw `PoolClosedError` after `dispose()`.
 */
export class IsolatePool {
  readonly #maxIdleMs: number;
  readonly #now: (() => number) | undefined;
  readonly #bundles = new Map<string, LoadedBundle>();
  readonly #cache: IsolateCache;
  #closed = false;
  readonly #spares: SpareIsolates | undefined;
  readonly #guard: CpuGuard | undefined;
  readonly #keys = new IsolateKeys();
  readonly #args: [string, string, string, boolean] = ["", "", "", false];
  readonly #options = { timeout: 0 };

  constructor(options: IsolatePoolOptions = {}) {
    const resolved = resolvePoolOptions(options);
    this.#cache = new IsolateCache(resolved.maxIsolates, resolved.maxHeapMb * 1024 * 1024);
    this.#maxIdleMs = resolved.maxIdleMs;
    this.#now = options.now;
    this.#spares = resolved.spare ? new SpareIsolates() : undefined;
    this.#guard = resolved.cpuGuard ? cpuGuard() : undefined;
  }

  /**
   * Makes a bundle known. Idempotent per hash; other code or limits for a known hash recycle its isolates.
   * Throws `SandboxOptionsError` for a memory limit under 8 MB.
   */
  load(bundleHash: BundleHash, code: string, limits: SandboxLimits): void {
    this.#assertOpen();
    if (!Number.isSafeInteger(limits.memoryMb) || limits.memoryMb < 8) {
      throw new SandboxOptionsError(
        `Expected \`memoryMb\` to be an integer from 8 and up (isolated-vm's minimum), got \`${limits.memoryMb}\``,
      );
    }
    const known = this.#bundles.get(bundleHash);
    if (known && known.code === code && sameLimits(known.limits, limits)) return;
    if (known) {
      this.#cache.dropBundle(bundleHash);
      known.codeCache?.release();
    }
    const prelude = preludeScript(limits);
    this.#bundles.set(bundleHash, { code, limits: { ...limits }, prelude, codeCache: undefined });
    this.#spares?.want(prelude, limits.memoryMb);
  }

  /** Forgets a bundle and disposes its isolates. */
  unload(bundleHash: BundleHash): void {
    this.#assertOpen();
    this.#cache.dropBundle(bundleHash);
    this.#bundles.get(bundleHash)?.codeCache?.release();
    this.#bundles.delete(bundleHash);
  }

  isLoaded(bundleHash: BundleHash): boolean {
    return this.#bundles.has(bundleHash);
  }

  /**
   * Runs one hook call synchronously. `replied` carries the prelude's `GuestReply` JSON string. Throws
   * `SandboxOptionsError` for a `timeoutMs` that is not a positive number (isolated-vm reads 0 as none).
   * `onPhase` hears `load` before a cold call loads its bundle and `run` before that call's handler. The
   * result counts the isolates evicted to make room for the call (`evicted`), if any.
   */
  call(bundleHash: BundleHash, call: SandboxCall, onPhase?: PhaseListener): PoolResult {
    const before = this.#cache.evicted;
    const result = this.#call(bundleHash, call, onPhase);
    const evicted = this.#cache.evicted - before;
    if (evicted > 0) result.evicted = evicted;
    return result;
  }

  #call(bundleHash: BundleHash, call: SandboxCall, onPhase?: PhaseListener): PoolResult {
    this.#assertOpen();
    assertTimeout(call.timeoutMs);
    const started = performance.now();
    const bundle = this.#bundles.get(bundleHash);
    if (!bundle) return failure("unavailable", notLoaded(bundleHash), 0, 0);
    if (!isHookPoint(call.point))
      return failure("unavailable", `Unknown hook point ${JSON.stringify(call.point)}`, 0, 0);
    const key = this.#keys.of(call.tenantId, bundleHash, call.priority === "observe");
    let live = this.#cache.get(key);
    let runStart = started;
    let loadMs: number | undefined;
    let ownLoad = false;
    if (live === undefined) {
      this.#cache.makeRoom();
      onPhase?.("load");
      ownLoad = this.#cache.takeRecycled(key);
      const loadTimeoutMs = loadTimeoutOf({ ...bundle.limits, timeoutMs: call.timeoutMs });
      const opened = openIsolate(key, bundleHash, bundle, loadTimeoutMs, this.#spares, this.#now?.() ?? started);
      runStart = performance.now();
      loadMs = runStart - started;
      if (opened.type === "failed") {
        // A bundle that throws, spins or bombs while loading would otherwise reload for free on every call.
        if (opened.code !== "unavailable") this.#cache.markRecycled(key);
        const hint =
          opened.code === "timeout" ? " (keep module top-level code light, or raise limits.loadTimeoutMs)" : "";
        const failed = failure(opened.code, `${opened.message}; the hook was not called${hint}`, 0, 0);
        return withLoad(failed, loadMs, ownLoad);
      }
      live = opened.live;
      if (this.#guard !== undefined) live.slot = this.#guard.register(live.isolate);
      this.#cache.add(live);
      onPhase?.("run");
    }
    live.lastUsed = this.#now?.() ?? runStart;
    const { isolate } = live;
    const timeout = call.timeoutMs;
    // The timeout is CPU time; `applySync` can only stop a call by the wall clock, so it gets the backstop.
    const backstop = callBackstopMs(call, runStart);
    const guard = live.slot === 0 ? undefined : this.#guard;
    const threadStart = callClock.start(runStart);
    const mark = guard === undefined ? 0 : guard.start(live.slot, timeout, SCHEDSTAT ? threadStart : Number.NaN);
    let reply: unknown;
    // isolated-vm copies the arguments in: one array and options object serve every call.
    const args = this.#args;
    args[0] = call.point;
    args[1] = call.eventJson;
    args[2] = call.ctxJson;
    args[3] = call.priority === "observe";
    this.#options.timeout = backstop;
    try {
      reply = live.call.applySync(undefined, args, this.#options);
      if (reply === "") reply = live.collect.applySync(undefined, [], { timeout: remaining(runStart + backstop) });
    } catch (error) {
      const stopped = guard?.end(mark) === true;
      const runMs = elapsed(runStart);
      const cpuMs = callCpuMs(threadMs(runMs, threadStart), runMs);
      // Classify before recycling: disposal is how a memory-limit event shows, and how the guard stops a call.
      if (stopped) {
        this.#cache.recycle(live);
        const used = Math.max(cpuMs, timeout);
        return withLoad(failure("timeout", callTimeoutMessage(used + 1e-3, timeout), used, runMs), loadMs, ownLoad);
      }
      const classified = classifyIsolateError(error, isolate, timeout, live.memoryMb);
      this.#cache.recycle(live);
      const message = classified.code === "timeout" ? callTimeoutMessage(cpuMs, timeout) : classified.message;
      return withLoad(failure(classified.code, message, cpuMs, runMs), loadMs, ownLoad);
    } finally {
      // The array must not keep a large event alive until the next call.
      args[1] = "";
      args[2] = "";
    }
    const stopped = guard?.end(mark) === true;
    const runMs = elapsed(runStart);
    const cpuMs = callCpuMs(threadMs(runMs, threadStart), runMs);
    if (stopped || cpuMs > timeout || typeof reply !== "string") {
      // Past its CPU time the reply is not taken, as if the call had been stopped at its timeout.
      this.#cache.recycle(live);
      const [code, message] =
        stopped || cpuMs > timeout
          ? (["timeout", callTimeoutMessage(Math.max(cpuMs, timeout + 1e-3), timeout)] as const)
          : (["threw", "The sandbox prelude returned no reply string"] as const);
      return withLoad(failure(code, message, cpuMs, runMs), loadMs, ownLoad);
    }
    this.#cache.used(live);
    return withLoad({ type: "replied", reply, cpuMs, runMs }, loadMs, ownLoad);
  }

  /**
   * Evaluates a loaded bundle in a fresh, throwaway isolate and replies with the prelude's `DescribeReply`
   * JSON string (the default export's keys and the `typeof` of each); parse it with `parseDescribeReply`.
   */
  describe(tenantId: TenantId, bundleHash: BundleHash, timeoutMs = DESCRIBE_TIMEOUT_MS): PoolResult {
    this.#assertOpen();
    assertTimeout(timeoutMs);
    const started = performance.now();
    const bundle = this.#bundles.get(bundleHash);
    if (!bundle) return failure("unavailable", notLoaded(bundleHash), 0, 0);
    const opened = openIsolate(`${tenantId}\u0000describe`, bundleHash, bundle, timeoutMs, this.#spares, started);
    if (opened.type === "failed") return failure(opened.code, opened.message, elapsed(started), elapsed(started));
    const { isolate } = opened.live;
    const threadStart = callClock.start(performance.now());
    const cpuMs = () => {
      const runMs = elapsed(started);
      return callCpuMs(threadMs(runMs, threadStart), runMs);
    };
    try {
      const reply: unknown = opened.live.describe.applySync(undefined, [], { timeout: remaining(opened.deadline) });
      if (typeof reply !== "string")
        return failure("threw", "The sandbox prelude returned no describe reply", cpuMs(), elapsed(started));
      return { type: "replied", reply, cpuMs: cpuMs(), runMs: elapsed(started) };
    } catch (error) {
      const classified = classifyIsolateError(error, isolate, timeoutMs, bundle.limits.memoryMb);
      return failure(classified.code, classified.message, cpuMs(), elapsed(started));
    } finally {
      disposeQuietly(isolate);
    }
  }

  /** Disposes isolates idle past `maxIdleMs`; the worker calls it from a timer. Returns how many. */
  sweep(): number {
    this.#assertOpen();
    return this.#cache.sweep((this.#now?.() ?? performance.now()) - this.#maxIdleMs);
  }

  stats(): PoolStats {
    return { ...this.#cache.stats(), bundles: this.#bundles.size, spares: this.#spares?.size ?? 0 };
  }

  /**
   * Disposes every isolate, and resolves once no spare is still being made on isolated-vm's threads: a
   * process must not exit during one (isolated-vm can crash it then). Idempotent.
   */
  async close(): Promise<void> {
    this.dispose();
    await this.#spares?.settled();
  }

  /** Disposes every isolate; later calls throw `PoolClosedError`. Idempotent. */
  dispose(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#spares?.dispose();
    this.#cache.dispose();
    this.#bundles.clear();
  }

  #assertOpen(): void {
    if (this.#closed) throw new PoolClosedError();
  }
}

/** `applySync` reads a timeout of 0 (or NaN) as none at all: refuse anything but a positive finite number. */
function assertTimeout(timeoutMs: number): void {
  if (!(timeoutMs >= 1 && timeoutMs <= 2 ** 31)) {
    throw new SandboxOptionsError(`Expected \`timeoutMs\` to be a number from 1 to 2^31, got \`${timeoutMs}\``);
  }
}

function failure(code: WorkerFailureCode, message: string, cpuMs: number, runMs: number): PoolResult {
  return { type: "failed", failure: { code, message }, cpuMs, runMs };
}

/** Adds a cold call's load to its result, marked when it was the tenant's own doing (`loadAfterRecycle`). */
function withLoad(result: PoolResult, loadMs: number | undefined, ownLoad: boolean): PoolResult {
  if (loadMs === undefined) return result;
  result.loadMs = loadMs;
  if (ownLoad) result.loadAfterRecycle = true;
  return result;
}

function notLoaded(bundleHash: BundleHash): string {
  return `Bundle ${bundleHash} is not loaded in this sandbox: load it before calling`;
}

function elapsed(started: number): number {
  return performance.now() - started;
}

/** The thread's CPU time of a call that ran `runMs`, read only when `callCpuMs` will use it. */
function threadMs(runMs: number, threadStart: number): number | undefined {
  return runMs < TICK_SAFE_MS ? undefined : callClock.end(performance.now()) - threadStart;
}

function sameLimits(a: SandboxLimits, b: SandboxLimits): boolean {
  return (
    a.memoryMb === b.memoryMb &&
    a.maxResultChars === b.maxResultChars &&
    a.maxStateChars === b.maxStateChars &&
    a.maxLogLines === b.maxLogLines &&
    a.maxLogChars === b.maxLogChars &&
    a.loadTimeoutMs === b.loadTimeoutMs
  );
}
