import fc from "fast-check";
import type { Failure, HookOutcome, HookPoint, JsonValue } from "../protocol/index.js";
import { eventArbitrary } from "./event-arbitrary.js";
import {
  calledFor,
  type FuzzFailure,
  type FuzzTarget,
  failureFacts,
  fuzzCall,
  fuzzCtxJson,
  type SeedEvent,
} from "./fuzz-target.js";
import { seedMutationArbitrary } from "./seed-mutation.js";

export interface FuzzPointOptions {
  readonly point: HookPoint;
  /** Strings worth trying (see `fuzzDictionary`). */
  readonly dictionary: readonly string[];
  /** Known events to mutate (fixtures); none: generated events only. */
  readonly seeds?: readonly SeedEvent[];
  /** Generated events to try at most (shrinking not counted). */
  readonly runs: number;
  /** Time bound, shrinking included. */
  readonly timeMs: number;
  readonly seed: number;
  /** Stop at the first failure (the deploy gate: one is enough to reject). Default: keep looking for others. */
  readonly stopAtFirstFailure?: boolean;
  readonly signal?: AbortSignal;
}

/** How a point's generated calls ended: `block`, `noop`, … for decisions, the failure code otherwise. */
export type OutcomeCounts = Record<string, number>;

export interface FuzzPointResult {
  readonly point: HookPoint;
  /** Generated events tried (fewer than asked when time ran out first). */
  readonly runs: number;
  readonly durationMs: number;
  readonly seed: number;
  readonly decided: OutcomeCounts;
  readonly failed: OutcomeCounts;
  /** Generated events whose tool no matcher of the handler selects: production never calls it for them. */
  readonly skipped: number;
  /** CPU ms of every generated call (shrinking excluded), for `cpuStats`. */
  readonly cpuSamples: readonly number[];
  /** Each distinct failure (code and message), shrunk, in the order found. */
  readonly failures: readonly FuzzFailure[];
  /** Per distinct decision, the generated events that took the most CPU: bases for the timeout hunt. */
  readonly branchEvents: readonly SeedEvent[];
}

/** Per distinct decision, how many of its events are kept as branch events. */
const BRANCH_EVENTS_PER_DECISION = 3;

/**
 * Calls one exported point with generated valid events (the point's schema, the dictionary) and, when there
 * are seeds, mutations of them, through the real sandbox and `invokeHook` (the one parse point). Any failed
 * outcome is a failure: timeout, memory, crash, pending, a throw or a result the point does not accept. A
 * failure is shrunk by fast-check; then, unless `stopAtFirstFailure`, the fuzz goes on with the next seed
 * (`seed + 1`, …) treating that failure as known, until `runs` or `timeMs` is spent: the whole sequence is
 * replayed by the same `seed` and options.
 */
export async function fuzzPoint(target: FuzzTarget, options: FuzzPointOptions): Promise<FuzzPointResult> {
  const { point, signal } = options;
  const ctxJson = fuzzCtxJson(target, "isohook-fuzz");
  const generated = eventArbitrary(point, options.dictionary);
  const mutated = seedMutationArbitrary(point, options.seeds ?? [], options.dictionary);
  const events = mutated === undefined ? generated : fc.oneof(generated, mutated);
  const started = performance.now();
  const decided: OutcomeCounts = {};
  const failedCounts: OutcomeCounts = {};
  const cpuSamples: number[] = [];
  const failures: FuzzFailure[] = [];
  // Per decision, the events that cost the most CPU: they went furthest into the hook's branches.
  const costliest = new Map<string, { eventJson: string; cpuMs: number }[]>();
  const known = new Set<string>();
  let runs = 0;
  let skipped = 0;

  for (let round = 0; runs < options.runs; round++) {
    const left = options.timeMs - (performance.now() - started);
    if (left <= 0) break;
    const seed = (options.seed + round) | 0;
    // `outcome` null: the handler is not called for the event (its tool matchers skip it), as in production.
    const calls: { event: string; outcome: HookOutcome | null; cpuMs: number }[] = [];
    let failing: { failure: Failure; eventJson: string } | undefined;
    let inFlight: Promise<boolean> | undefined;
    const property = fc.asyncProperty(events, (event) => {
      inFlight = call(event);
      return inFlight;
    });
    const call = async (event: unknown): Promise<boolean> => {
      signal?.throwIfAborted();
      const eventJson = JSON.stringify(event);
      if (!calledFor(target, point, event as JsonValue)) {
        calls.push({ event: eventJson, outcome: null, cpuMs: 0 });
        return true;
      }
      const {
        outcome,
        cost: { cpuMs },
      } = await fuzzCall(target, { point, eventJson, ctxJson }, signal);
      calls.push({ event: eventJson, outcome, cpuMs });
      if (outcome.type === "decided" || known.has(failureKey(outcome.failure))) return true;
      failing = { failure: outcome.failure, eventJson };
      return false;
    };
    const details = await fc.check(property, {
      numRuns: options.runs - runs,
      seed,
      interruptAfterTimeLimit: Math.max(1, Math.round(left)),
      markInterruptAsFailure: false,
    });
    // The bound cut the first call short: its outcome (bounded by the sandbox's own limits) still counts.
    if (details.interrupted && details.numRuns === 0) await inFlight?.catch(() => undefined);
    signal?.throwIfAborted();
    // The first numRuns calls are the generated runs; the rest are shrinking attempts.
    for (const call of calls.slice(0, details.numRuns)) {
      if (call.outcome === null) {
        skipped++;
        continue;
      }
      cpuSamples.push(call.cpuMs);
      if (call.outcome.type === "failed") {
        failedCounts[call.outcome.failure.code] = (failedCounts[call.outcome.failure.code] ?? 0) + 1;
        continue;
      }
      const kind = call.outcome.result === null ? "noop" : call.outcome.result.type;
      decided[kind] = (decided[kind] ?? 0) + 1;
      const kept = costliest.get(kind) ?? [];
      kept.push({ eventJson: call.event, cpuMs: call.cpuMs });
      kept.sort((a, b) => b.cpuMs - a.cpuMs);
      costliest.set(kind, kept.slice(0, BRANCH_EVENTS_PER_DECISION));
    }
    runs += details.numRuns;
    // fast-check reports a bound that cut the first call short as a failure without a counterexample.
    const cutShort = details.interrupted && details.numRuns === 0 && details.errorInstance == null;
    if (!details.failed || (cutShort && failing === undefined)) break;
    if (failing === undefined) {
      // The property threw instead of returning false: the executor itself failed (closed or aborted).
      const message = details.errorInstance instanceof Error ? details.errorInstance.message : "the executor failed";
      const event = (details.counterexample?.[0] ?? null) as JsonValue;
      failures.push({ code: "unavailable", message, event, seed: options.seed, found: "fuzz" });
      break;
    }
    const { failure, eventJson } = failing;
    known.add(failureKey(failure));
    failures.push({
      ...failureFacts(failure),
      event: JSON.parse(eventJson) as JsonValue,
      seed: options.seed,
      found: "fuzz",
    });
    if (options.stopAtFirstFailure === true) break;
  }
  const durationMs = Math.round(performance.now() - started);
  const branchEvents = [...costliest].flatMap(([kind, kept]) =>
    kept.map((k) => ({ point, event: JSON.parse(k.eventJson) as JsonValue, origin: `generated (${kind})` })),
  );
  return {
    point,
    runs,
    durationMs,
    seed: options.seed,
    decided,
    failed: failedCounts,
    skipped,
    cpuSamples,
    failures,
    branchEvents,
  };
}

/** Failures are the same when code and message are: `threw` with two different errors are two findings. */
export function failureKey(failure: Pick<Failure, "code" | "message">): string {
  return `${failure.code}\u0000${failure.message}`;
}
