import {
  type BundleHash,
  isHookPoint,
  loadTimeoutOf,
  type SandboxLimits,
  type TenantId,
} from "../../src/protocol/index.js";
import { PoolClosedError, SandboxOptionsError } from "./errors.js";
import { type ClassifiedError, classifyIsolateError } from "./isolate-error.js";
import type * as ivm from "./isolated-vm.js";
import { resolvePoolOptions } from "./pool-options.js";
import type {
  IsolatePoolOptions,
  PhaseListener,
  PoolCall,
  PoolFailureCode,
  PoolResult,
  PoolStats,
} from "./pool-types.js";
import { verifyPrelude } from "./prelude-check.js";
import { preludeScript } from "./prelude-script.js";
import { PREPARE_TIMEOUT_MS, prepareIsolate, SpareIsolates } from "./prepared-isolate.js";

interface LoadedBundle {
  readonly code: string;
  readonly limits: SandboxLimits;
  readonly prelude: string;
}

/** One live isolate: the prelude's entry points, referenced before any tenant code ran. */
interface Slot {
  readonly key: string;
  readonly bundleHash: BundleHash;
  readonly isolate: ivm.Isolate;
  readonly call: ivm.Reference;
  readonly collect: ivm.Reference;
  readonly describe: ivm.Reference;
  readonly memoryMb: number;
  lastUsed: number;
  /** The isolate's `cpuTime` when its previous call ended: one read per call gives the delta. */
  cpuMark: bigint;
  heapBytes: number;
  calls: number;
}

/** `deadline`: when loading had to be done by (a describe keeps it for the rest of its work). */
type Opened =
  | { kind: "opened"; slot: Slot; deadline: number }
  | { kind: "failed"; code: PoolFailureCode; message: string };

/** Heap statistics are read on the first call and every this many calls after (a sync call, ~13 µs). */
const HEAP_SAMPLE_EVERY = 256;
const DESCRIBE_TIMEOUT_MS = 1_000;

/**
 * The in-process isolate manager: one V8 isolate per (tenant, bundle hash), created lazily on the first
 * call, bundle compiled once, one long-lived context. Every call is one synchronous `applySync` with a
 * timeout, strings in and one string out (DESIGN §2); an async handler takes a second `applySync` to
 * collect its settled reply. Used by the worker process main and by the inline executor; the only user of
 * isolated-vm.
 *
 * ```ts
 * const pool = new IsolatePool({ maxIsolates: 128 });
 * pool.load(hash, code, { memoryMb: 32, maxResultBytes: 65_536, maxStateBytes: 16_384, maxLogLines: 50, maxLogBytes: 8_192 });
 * const r = pool.call({ tenantId, bundleHash: hash, point: "tool.call", eventJson, ctxJson, timeoutMs: 50 });
 * // r.kind === "replied" → parseGuestReply(point, r.reply, limits) on the host
 * ```
 *
 * A cold call (no isolate for its tenant and bundle yet, or it was recycled or evicted) first loads the
 * bundle: isolate (a prepared spare if one is ready), then the bundle's top-level code, bounded by the
 * bundle's load timeout (`SandboxLimits.loadTimeoutMs`, default `loadTimeoutOf`). The call's `timeoutMs`
 * then covers its handler only, so the first call after a recycle is not cut short by loading; the result
 * reports the load apart (`loadMs`). An isolate is disposed and recreated lazily after every timeout,
 * memory-limit event or error outside the prelude's control (DESIGN §2.7). There is no in-thread watchdog: `applySync` blocks this thread, so no
 * timer can fire during a call; what the `timeout` does not cover must be stopped by killing the process
 * (the supervisor's deadline). Methods never throw for anything a guest does; they throw
 * `PoolClosedError` after `dispose()`.
 */
export class IsolatePool {
  readonly #maxIsolates: number;
  readonly #maxHeapBytes: number;
  readonly #maxIdleMs: number;
  readonly #now: (() => number) | undefined;
  readonly #bundles = new Map<string, LoadedBundle>();
  /** Recency is `Slot.lastUsed`, scanned only when something must be evicted (rare next to calls). */
  readonly #slots = new Map<string, Slot>();
  #heapBytes = 0;
  #recycled = 0;
  #evicted = 0;
  #closed = false;
  readonly #spares: SpareIsolates | undefined;

  constructor(options: IsolatePoolOptions = {}) {
    const resolved = resolvePoolOptions(options);
    this.#maxIsolates = resolved.maxIsolates;
    this.#maxHeapBytes = resolved.maxHeapMb * 1024 * 1024;
    this.#maxIdleMs = resolved.maxIdleMs;
    this.#now = options.now;
    this.#spares = resolved.spare ? new SpareIsolates() : undefined;
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
    if (known) this.#disposeBundleSlots(bundleHash);
    this.#bundles.set(bundleHash, { code, limits: { ...limits }, prelude: preludeScript(limits) });
  }

  /** Forgets a bundle and disposes its isolates. */
  unload(bundleHash: BundleHash): void {
    this.#assertOpen();
    this.#disposeBundleSlots(bundleHash);
    this.#bundles.delete(bundleHash);
  }

  isLoaded(bundleHash: BundleHash): boolean {
    return this.#bundles.has(bundleHash);
  }

  /**
   * Runs one hook call synchronously. `replied` carries the prelude's `GuestReply` JSON string. Throws
   * `SandboxOptionsError` for a `timeoutMs` that is not a positive number (isolated-vm reads 0 as none).
   * `onPhase` hears `load` before a cold call loads its bundle and `run` before that call's handler.
   */
  call(call: PoolCall, onPhase?: PhaseListener): PoolResult {
    this.#assertOpen();
    assertTimeout(call.timeoutMs);
    const started = performance.now();
    const bundle = this.#bundles.get(call.bundleHash);
    if (!bundle) return failure("unavailable", notLoaded(call.bundleHash), 0, 0);
    if (!isHookPoint(call.point))
      return failure("unavailable", `Unknown hook point ${JSON.stringify(call.point)}`, 0, 0);
    const key = `${call.tenantId}\u0000${call.bundleHash}`;
    let slot = this.#slots.get(key);
    let runStart = started;
    let loadMs: number | undefined;
    if (slot === undefined) {
      while (this.#slots.size >= this.#maxIsolates) this.#evict(this.#leastRecent());
      onPhase?.("load");
      const opened = this.#open(
        key,
        call.bundleHash,
        bundle,
        loadTimeoutOf({ ...bundle.limits, timeoutMs: call.timeoutMs }),
      );
      runStart = performance.now();
      loadMs = runStart - started;
      if (opened.kind === "failed") {
        const hint =
          opened.code === "timeout" ? " (keep module top-level code light, or raise limits.loadTimeoutMs)" : "";
        return { ...failure(opened.code, `${opened.message}; the hook was not called${hint}`, 0, 0), loadMs };
      }
      slot = opened.slot;
      this.#slots.set(key, slot);
      onPhase?.("run");
    }
    slot.lastUsed = this.#now?.() ?? runStart;
    this.#spares?.touch(started);
    const { isolate } = slot;
    const timeout = call.timeoutMs;
    let reply: unknown;
    try {
      reply = slot.call.applySync(undefined, [call.point, call.eventJson, call.ctxJson], { timeout });
      if (reply === "") reply = slot.collect.applySync(undefined, [], { timeout: remaining(runStart + timeout) });
    } catch (error) {
      const cpuMs = cpuSince(isolate, slot.cpuMark, runStart);
      // Classify before recycling: disposal is how a memory-limit event shows.
      const classified = classifyIsolateError(error, isolate, timeout, slot.memoryMb);
      this.#recycle(slot);
      return withLoad(failure(classified.code, classified.message, cpuMs, elapsed(runStart)), loadMs);
    }
    const cpuNow = isolate.cpuTime;
    const cpuMs = Number(cpuNow - slot.cpuMark) / 1e6;
    slot.cpuMark = cpuNow;
    if (typeof reply !== "string") {
      this.#recycle(slot);
      return withLoad(
        failure("threw", "The sandbox prelude returned no reply string", cpuMs, elapsed(runStart)),
        loadMs,
      );
    }
    if (slot.calls++ % HEAP_SAMPLE_EVERY === 0) this.#sampleHeap(slot);
    const replied: PoolResult = { kind: "replied", reply, cpuMs, wallMs: elapsed(runStart) };
    return loadMs === undefined ? replied : { ...replied, loadMs };
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
    const opened = this.#open(`${tenantId}\u0000describe`, bundleHash, bundle, timeoutMs);
    if (opened.kind === "failed") return failure(opened.code, opened.message, elapsed(started), elapsed(started));
    const { isolate } = opened.slot;
    try {
      const reply: unknown = opened.slot.describe.applySync(undefined, [], { timeout: remaining(opened.deadline) });
      const cpuMs = cpuSince(isolate, opened.slot.cpuMark, started);
      if (typeof reply !== "string")
        return failure("threw", "The sandbox prelude returned no describe reply", cpuMs, elapsed(started));
      return { kind: "replied", reply, cpuMs, wallMs: elapsed(started) };
    } catch (error) {
      const classified = classifyIsolateError(error, isolate, timeoutMs, bundle.limits.memoryMb);
      return failure(
        classified.code,
        classified.message,
        cpuSince(isolate, opened.slot.cpuMark, started),
        elapsed(started),
      );
    } finally {
      disposeQuietly(isolate);
    }
  }

  /** Disposes isolates idle past `maxIdleMs`; the worker calls it from a timer. Returns how many. */
  sweep(): number {
    this.#assertOpen();
    const cutoff = (this.#now?.() ?? performance.now()) - this.#maxIdleMs;
    let swept = 0;
    for (const slot of [...this.#slots.values()]) {
      if (slot.lastUsed > cutoff) continue;
      this.#evict(slot);
      swept++;
    }
    return swept;
  }

  stats(): PoolStats {
    return {
      isolates: this.#slots.size,
      bundles: this.#bundles.size,
      heapBytes: this.#heapBytes,
      recycled: this.#recycled,
      evicted: this.#evicted,
      spares: this.#spares?.size ?? 0,
    };
  }

  /** Disposes every isolate; later calls throw `PoolClosedError`. Idempotent. */
  dispose(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#spares?.dispose();
    for (const slot of this.#slots.values()) disposeQuietly(slot.isolate);
    this.#slots.clear();
    this.#bundles.clear();
    this.#heapBytes = 0;
  }

  /**
   * An isolate with the prelude (a spare if one is ready), then the bundle evaluated and adopted. The
   * bundle's `loadTimeoutMs` starts once the prelude is in: creating the isolate is the sandbox's cost, not
   * the tenant's. The slot's CPU mark is taken after loading, so a call's `cpuMs` covers its handler only.
   */
  #open(key: string, bundleHash: BundleHash, bundle: LoadedBundle, loadTimeoutMs: number): Opened {
    verifyPrelude();
    const { memoryMb } = bundle.limits;
    let phase = "prelude";
    let prepared = this.#spares?.take(bundle.prelude, memoryMb);
    try {
      prepared ??= prepareIsolate(bundle.prelude, memoryMb, PREPARE_TIMEOUT_MS);
      const deadline = performance.now() + loadTimeoutMs;
      phase = "compile";
      // `void 0` makes the completion value a primitive whatever the bundle's last statement is.
      const script = prepared.isolate.compileScriptSync(`${bundle.code}\n;void 0;`, {
        filename: `bundle:${bundleHash}`,
      });
      phase = "run";
      script.runSync(prepared.context, { timeout: remaining(deadline) });
      script.release();
      prepared.adopt.applySync(undefined, [], { timeout: remaining(deadline) });
      prepared.adopt.release();
      const { isolate, call, collect, describe } = prepared;
      const slot: Slot = {
        key,
        bundleHash,
        isolate,
        call,
        collect,
        describe,
        memoryMb,
        lastUsed: this.#now?.() ?? performance.now(),
        cpuMark: isolate.cpuTime,
        heapBytes: 0,
        calls: 0,
      };
      return { kind: "opened", slot, deadline };
    } catch (error) {
      if (prepared === undefined) {
        const text = error instanceof Error ? error.message : String(error);
        return { kind: "failed", code: "unavailable", message: `The sandbox could not create an isolate: ${text}` };
      }
      const classified = classifyIsolateError(error, prepared.isolate, loadTimeoutMs, memoryMb);
      disposeQuietly(prepared.isolate);
      return {
        kind: "failed",
        code: classified.code,
        message: loadFailure(classified, phase, loadTimeoutMs, memoryMb),
      };
    }
  }

  #sampleHeap(slot: Slot): void {
    try {
      const heap = slot.isolate.getHeapStatisticsSync();
      const bytes = heap.used_heap_size + heap.externally_allocated_size;
      this.#heapBytes += bytes - slot.heapBytes;
      slot.heapBytes = bytes;
    } catch {
      return;
    }
    while (this.#heapBytes > this.#maxHeapBytes && this.#slots.size > 1) this.#evict(this.#leastRecent(slot));
  }

  /** The least recently used slot other than `except`; the pool holds at least one other when asked. */
  #leastRecent(except?: Slot): Slot {
    let oldest: Slot | undefined;
    for (const slot of this.#slots.values()) {
      if (slot !== except && (oldest === undefined || slot.lastUsed < oldest.lastUsed)) oldest = slot;
    }
    if (oldest === undefined) throw new Error("IsolatePool: no slot to evict");
    return oldest;
  }

  #evict(slot: Slot): void {
    this.#drop(slot);
    this.#evicted++;
  }

  #recycle(slot: Slot): void {
    this.#drop(slot);
    this.#recycled++;
  }

  #drop(slot: Slot): void {
    if (this.#slots.get(slot.key) === slot) this.#slots.delete(slot.key);
    this.#heapBytes -= slot.heapBytes;
    disposeQuietly(slot.isolate);
  }

  #disposeBundleSlots(bundleHash: BundleHash): void {
    for (const slot of [...this.#slots.values()]) if (slot.bundleHash === bundleHash) this.#drop(slot);
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

function failure(code: PoolFailureCode, message: string, cpuMs: number, wallMs: number): PoolResult {
  return { kind: "failed", code, message, cpuMs, wallMs };
}

function withLoad(result: PoolResult, loadMs: number | undefined): PoolResult {
  return loadMs === undefined ? result : { ...result, loadMs };
}

/** Says that the bundle, not a handler, failed: loading is tenant code under its own limit. */
function loadFailure(classified: ClassifiedError, phase: string, loadTimeoutMs: number, memoryMb: number): string {
  switch (classified.code) {
    case "timeout":
      return `The bundle's top-level code did not finish loading within its ${loadTimeoutMs} ms load timeout`;
    case "memory_limit":
      return `The bundle exceeded its ${memoryMb} MB memory limit while loading`;
    case "threw":
      return `The bundle ${phase === "compile" ? "does not compile" : "threw while loading"}: ${classified.detail}`;
    case "unavailable":
      return classified.message;
    default: {
      const never: never = classified.code;
      return never;
    }
  }
}

function notLoaded(bundleHash: BundleHash): string {
  return `Bundle ${bundleHash} is not loaded in this sandbox: load it before calling`;
}

/** What is left until `deadline`, as an `applySync` timeout (at least 1 ms: 0 would mean none). */
function remaining(deadline: number): number {
  return Math.max(1, Math.ceil(deadline - performance.now()));
}

function elapsed(started: number): number {
  return performance.now() - started;
}

/** CPU time spent in the isolate since `start`; after a disposal it is gone, so wall time stands in. */
function cpuSince(isolate: ivm.Isolate, start: bigint, started: number): number {
  try {
    return Number(isolate.cpuTime - start) / 1e6;
  } catch {
    return elapsed(started);
  }
}

function disposeQuietly(isolate: ivm.Isolate): void {
  try {
    if (!isolate.isDisposed) isolate.dispose();
  } catch {
    // Already disposed by isolated-vm after a memory-limit event.
  }
}

function sameLimits(a: SandboxLimits, b: SandboxLimits): boolean {
  return (
    a.memoryMb === b.memoryMb &&
    a.maxResultBytes === b.maxResultBytes &&
    a.maxStateBytes === b.maxStateBytes &&
    a.maxLogLines === b.maxLogLines &&
    a.maxLogBytes === b.maxLogBytes &&
    a.loadTimeoutMs === b.loadTimeoutMs
  );
}
