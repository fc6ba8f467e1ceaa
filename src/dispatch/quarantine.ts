import {
  type BundleHash,
  countsTowardsQuarantine,
  type Failure,
  type FailureCode,
  MAX_WALL_BACKSTOP_FACTOR,
  QUARANTINE_CODES,
  type SandboxCost,
  type TenantId,
} from "../protocol/index.js";
import type { Emit } from "./events.js";
import type { FleetQuarantine, QuarantineSettings } from "./quarantine-ledger.js";
import { SuspectGate, type Turn } from "./suspect-gate.js";

interface Entry {
  /** Clock times of recent quarantine-kind failures, oldest first, all within the window. */
  failures: number[];
  until: number | undefined;
  strikes: number;
  exitedAt: number | undefined;
  /** Where the quarantine in force came from: this host's failures, or the fleet's (through the store). */
  origin: QuarantineOrigin;
}

/** `host`: this host's own failures put the bundle there; `fleet`: the store's book did (failures of any host). */
export type QuarantineOrigin = "host" | "fleet";

/** A (tenant, bundle) pair as the book keys it; built once per run, not per call. */
export interface BundleKey {
  readonly tenantId: TenantId;
  readonly hash: BundleHash;
  readonly id: string;
}

export function bundleKey(tenantId: TenantId, hash: BundleHash): BundleKey {
  return { tenantId, hash, id: `${tenantId}\u0000${hash}` };
}

/** A bundle in quarantine: when it ends and how many strikes led there. */
export interface QuarantineStatus {
  readonly until: number;
  readonly strike: number;
}

/**
 * What the dispatcher asks of quarantine, per call: whether a (tenant, bundle) is in quarantine now, and a
 * failure to count. `LocalQuarantineBook` keeps one host's book; `FleetQuarantineBook` shares it through
 * the store. `status` is on every call's path and never waits.
 */
export interface QuarantineBook {
  /** The quarantine the pair is in at `now`, or undefined. */
  status(key: BundleKey, now: number): QuarantineStatus | undefined;
  /** Counts a failure of `code`, `weight` times; returns the quarantine it started here, if any. */
  strike(key: BundleKey, code: FailureCode, now: number, weight?: number): QuarantineStatus | undefined;
  /**
   * Undefined when a call of the pair may start at once; else resolves to its turn once it may (a suspect
   * bundle runs one call at a time on a host: `SuspectGate`). The caller ends the turn however the call
   * ends, after `strike` when it struck; rejects when `signal` aborts while waiting.
   */
  admit(key: BundleKey, signal: AbortSignal | undefined): Promise<Turn> | undefined;
}

/**
 * Which (tenant, bundle) pairs are in quarantine (docs/architecture.md, "Failure is data"): K failures of the kinds in
 * `QUARANTINE_CODES` within W put a pair in quarantine for a cooldown that doubles with each entry (up to a
 * maximum) and starts over once the pair stayed quiet for `forgetAfterMs` after its last quarantine. Exit
 * is observed lazily, at the first look after the cooldown, so tests drive it with their clock.
 */
export class LocalQuarantineBook implements QuarantineBook {
  readonly #settings: QuarantineSettings;
  readonly #emit: Emit | undefined;
  readonly #entries = new Map<string, Entry>();
  readonly #gate: SuspectGate;

  /** `counted`: resolves once the strikes so far reached the book that decides (default: this one, at once). */
  constructor(settings: QuarantineSettings, emit: Emit | undefined, counted = () => Promise.resolve()) {
    this.#settings = settings;
    this.#emit = emit;
    this.#gate = new SuspectGate(counted);
  }

  admit(key: BundleKey, signal: AbortSignal | undefined): Promise<Turn> | undefined {
    return this.#gate.admit(key, signal);
  }

  /** The quarantine the pair is in at `now`, or undefined (emitting `quarantine.exited` when one just ended). */
  status(key: BundleKey, now: number): QuarantineStatus | undefined {
    const entry = this.#entries.get(key.id);
    if (entry?.until === undefined) return undefined;
    if (now < entry.until) return { until: entry.until, strike: entry.strikes };
    const at = entry.until;
    entry.until = undefined;
    entry.exitedAt = at;
    entry.failures = [];
    this.#emit?.({ type: "quarantine.exited", at, tenantId: key.tenantId, bundleHash: key.hash });
    return undefined;
  }

  /**
   * Counts a failure, `weight` times (a call that held the worker for many timeouts' worth: `strikeWeight`);
   * only the quarantine kinds count. Returns the quarantine it started, if any.
   */
  strike(key: BundleKey, code: FailureCode, now: number, weight = 1): QuarantineStatus | undefined {
    if (!QUARANTINE_CODES.has(code)) return undefined;
    this.#gate.distrust(key);
    let entry = this.#entries.get(key.id);
    if (entry === undefined) {
      entry = { failures: [], until: undefined, strikes: 0, exitedAt: undefined, origin: "host" };
      this.#entries.set(key.id, entry);
    }
    if (entry.until !== undefined) return undefined;
    entry.origin = "host";
    const { failures, windowMs, cooldownMs, maxCooldownMs, forgetAfterMs } = this.#settings;
    if (entry.exitedAt !== undefined && now - entry.exitedAt >= forgetAfterMs) {
      entry.strikes = 0;
      entry.exitedAt = undefined;
    }
    for (let i = Math.min(weight, failures); i > 0; i--) entry.failures.push(now);
    while (entry.failures.length > 0 && (entry.failures[0] ?? now) <= now - windowMs) entry.failures.shift();
    if (entry.failures.length < failures) return undefined;
    entry.strikes += 1;
    const cooldown = Math.min(maxCooldownMs, cooldownMs * 2 ** (entry.strikes - 1));
    entry.until = now + cooldown;
    entry.failures = [];
    this.#emit?.({
      type: "quarantine.entered",
      at: now,
      tenantId: key.tenantId,
      bundleHash: key.hash,
      until: entry.until,
      cooldownMs: cooldown,
      strike: entry.strikes,
      code,
      origin: "host",
    });
    return { until: entry.until, strike: entry.strikes };
  }

  /**
   * Takes the fleet's word for a bundle: an entry in force (from another host, or the store's count of
   * this host's failures with the others') puts it in quarantine here too, a release lifts it. An entry
   * this book already has, with the same end, changes nothing and emits nothing.
   */
  adopt(key: BundleKey, fleet: FleetQuarantine, now: number): void {
    let entry = this.#entries.get(key.id);
    const inForce = fleet.releasedAt === null && now < fleet.until;
    if (!inForce) {
      if (entry?.until === undefined || fleet.releasedAt === null) return;
      entry.until = undefined;
      entry.exitedAt = fleet.releasedAt;
      entry.failures = [];
      const by = fleet.releasedBy ?? "";
      this.#emit?.({
        type: "quarantine.exited",
        at: now,
        tenantId: key.tenantId,
        bundleHash: key.hash,
        releasedBy: by,
      });
      return;
    }
    if (entry === undefined) {
      entry = { failures: [], until: undefined, strikes: 0, exitedAt: undefined, origin: "fleet" };
      this.#entries.set(key.id, entry);
    }
    if (entry.until !== undefined && entry.until >= fleet.until) return;
    const fresh = entry.until === undefined;
    entry.until = fleet.until;
    entry.strikes = fleet.strike;
    entry.failures = [];
    if (!fresh) return;
    entry.origin = "fleet";
    this.#emit?.({
      type: "quarantine.entered",
      at: now,
      tenantId: key.tenantId,
      bundleHash: key.hash,
      until: fleet.until,
      cooldownMs: fleet.until - fleet.since,
      strike: fleet.strike,
      code: fleet.codes[0] ?? "timeout",
      origin: "fleet",
      hosts: fleet.hosts,
    });
  }
}

/**
 * The failure code of the quarantine strike a call takes, or undefined: its own failure when that is of a
 * quarantine kind (not a bystander's, and for a `timeout` only one the tenant caused: `timeoutIsTenants`),
 * else `timeout` when a load the tenant caused made the call outlast `timeoutMs` (the per-call timeout):
 * held to the timeout its calls have, that call timed out. One strike per call, counted `strikeWeight`
 * times. Why, in docs/architecture.md ("Reloads a tenant causes", "Timeouts: CPU time, wall-clock backstop").
 */
export function strikeOf(failure: Failure | undefined, cost: SandboxCost, timeoutMs: number): FailureCode | undefined {
  if (failure?.bystander === true) return undefined;
  if (failure !== undefined && countsTowardsQuarantine(failure)) {
    if (failure.code !== "timeout" || timeoutIsTenants(cost, timeoutMs)) return failure.code;
  }
  if (cost.loadAfterRecycle === true && (cost.loadMs ?? 0) + cost.runMs > timeoutMs) return "timeout";
  return undefined;
}

/**
 * Whether a `timeout` is the tenant's doing: the isolate's CPU time reached the per-call timeout (a call
 * stopped only by the wall-clock backstop, having waited or been starved by a busy machine, is not), or it
 * timed out loading its bundle (no handler ran: the bundle's top-level code held the load past its own
 * timeout).
 */
export function timeoutIsTenants(cost: SandboxCost, timeoutMs: number): boolean {
  return cost.cpuMs >= timeoutMs || (cost.runMs === 0 && cost.loadMs !== undefined);
}

/**
 * How many failures a struck call counts for in the quarantine window: 1, or, when a load the tenant caused
 * is part of it, one per whole per-call timeout of that load and its run (`ownLoadMs`). Quarantine then cuts
 * a tenant off after about K call timeouts of its own doing: a 900 ms reload is 18 timeouts of 50 ms, not
 * one, while a spinner's run counts once however long the wall-clock backstop let it go on.
 */
export function strikeWeight(cost: SandboxCost, timeoutMs: number): number {
  if (cost.loadAfterRecycle !== true) return 1;
  return Math.max(1, Math.floor(ownLoadMs(cost, timeoutMs) / timeoutMs));
}

/** A run shorter than this says too little about the share of a core its worker had (thread-cpu.ts). */
const SHARE_FROM_RUN_MS = 10;

/**
 * What a reload the tenant caused and its run cost in the tenant's own terms: the load's wall time scaled
 * by the share of a core the run had (its CPU time over its wall time, for runs long enough to say; the
 * load is wall time and stretches with the machine's load as the run does), plus the run's time so scaled
 * (its CPU time), up to the timeout. On an idle machine that is the load and the run as the clock saw
 * them; with every core busy, a load and a run the machine stretched fivefold count for what they used.
 * The share is taken no lower than the backstop allows for (1 / `MAX_WALL_BACKSTOP_FACTOR`): a run that
 * waits instead of computing makes its share look small, and must not make a slow reload of its own free.
 */
function ownLoadMs(cost: SandboxCost, timeoutMs: number): number {
  const measured = cost.runMs >= SHARE_FROM_RUN_MS ? cost.cpuMs / cost.runMs : 1;
  const share = Math.min(1, Math.max(1 / MAX_WALL_BACKSTOP_FACTOR, measured));
  return ((cost.loadMs ?? 0) + Math.min(cost.runMs, timeoutMs / share)) * share;
}
