import { HOOK_POINTS, type HookPoint, type JsonValue } from "../protocol/index.js";
import {
  calledFor,
  type FuzzFailure,
  type FuzzTarget,
  failureFacts,
  fuzzCall,
  fuzzCtxJson,
  type GrowthInput,
  type SeedEvent,
} from "./fuzz-target.js";
import { fitGrowth, type GrowthPoint, growsSuperLinearly } from "./growth-fit.js";
import { type GrowthSeries, grownEvent, growthInput, growthSeries } from "./growth-sites.js";

export interface HuntOptions {
  readonly point: HookPoint;
  /** Events to grow: fixture events and the events that reached each decision in the random fuzz. */
  readonly bases: readonly SeedEvent[];
  /** Time bound for the measurements (a final confirmation of flagged series may add a little). */
  readonly timeMs: number;
  /** Calls per size; the least CPU time counts. Default 3. */
  readonly repeats?: number;
  /** Recorded with failures, for `--seed`. */
  readonly seed: number;
  readonly signal?: AbortSignal;
}

/** Super-linear CPU growth found by the timeout hunt. */
export interface GrowthFlag {
  /** The input at the largest size measured in the fit: the one that shows the growth. */
  readonly input: GrowthInput;
  /** log-log slope of CPU time against size: 2 is quadratic. */
  readonly slope: number;
  /** Size (characters or items) at which a call is projected to reach its timeout. */
  readonly projectedSize: number;
  /** Whether the projection is past what an event may hold (the event cap): a warning more than a bug. */
  readonly beyondCap: boolean;
  readonly points: readonly GrowthPoint[];
  /** Other inputs that grew as badly at the same path. */
  readonly alike: number;
}

export interface HuntResult {
  readonly series: number;
  readonly calls: number;
  readonly durationMs: number;
  /** The largest size measured, across series. */
  readonly largestSize: number;
  /** Whether every series ran to the event cap or to a failure within the time bound. */
  readonly complete: boolean;
  /**
   * Inputs whose growth stopped at a timeout that used less than half the timeout in CPU: the machine was
   * too busy to run the call in time (timeouts are wall-clock), not a finding about the hook.
   */
  readonly starved: number;
  /** The costliest input measured (least CPU of its calls), to show how close the largest inputs come. */
  readonly peak?: { readonly input: GrowthInput; readonly cpuMs: number };
  readonly flags: readonly GrowthFlag[];
  /** Distinct failure codes hit while growing, each at the smallest input found. */
  readonly failures: readonly FuzzFailure[];
}

const DEFAULT_REPEATS = 3;
/** CPU times below this are fixed costs and timer noise, whatever the size. */
const MIN_FLOOR_MS = 0.1;
/** …and so are times below this multiple of the seed event's own CPU time. */
const FLOOR_OVER_BASELINE = 4;
const FIRST_SIZE = 16;
/** A timeout while growing stands only if the same input times out this many more times (see `fuzzCall`). */
const TIMEOUT_RETRIES = 2;
/** A timeout whose call used less CPU than this share of the timeout was starved by a busy machine. */
const STARVED_BELOW = 0.5;

interface Running {
  readonly series: GrowthSeries;
  readonly sizes: number[];
  readonly floorMs: number;
  readonly points: GrowthPoint[];
  done: boolean;
}

/**
 * Timeout hunting: grows the strings and arrays of the base events geometrically (×2 from 16 up to the
 * event cap), all inputs one size step at a time so a time bound cuts them all at the same size, and fits
 * each input's CPU time (the isolate's own `cpuTime`, least of `repeats` calls) against its size on a
 * log-log scale. A slope ≥ 1.5 is flagged, after re-measuring its points to rule out a noisy spell, with
 * the size at which the call is projected to reach its timeout. A call that fails while growing (usually
 * `timeout`) is a failure of the point, reported with the input that caused it.
 */
export async function huntTimeouts(target: FuzzTarget, options: HuntOptions): Promise<HuntResult> {
  const started = performance.now();
  const { limits } = target;
  const { point, signal } = options;
  const repeats = options.repeats ?? DEFAULT_REPEATS;
  const schema = HOOK_POINTS[point].event;
  const ctxJson = fuzzCtxJson(target, "isohook-fuzz-grow");
  const failures: FuzzFailure[] = [];
  let calls = 0;

  /** Least CPU of `repeats` calls; a failure ends it. A timeout with little CPU was starved, not slow. */
  const measure = async (eventJson: string) => {
    let least = Number.POSITIVE_INFINITY;
    for (let i = 0; i < repeats; i++) {
      signal?.throwIfAborted();
      const {
        outcome,
        cost: { cpuMs },
      } = await fuzzCall(target, { point, eventJson, ctxJson }, signal, TIMEOUT_RETRIES);
      calls++;
      if (outcome.type === "failed") {
        const starved = outcome.failure.code === "timeout" && cpuMs < STARVED_BELOW * limits.timeoutMs;
        return { cpuMs: least, failure: starved ? undefined : outcome.failure, starved };
      }
      least = Math.min(least, cpuMs);
    }
    return { cpuMs: least, failure: undefined, starved: false };
  };

  // A base whose tool no matcher selects never reaches the handler in production: growing it finds nothing real.
  const bases = options.bases.filter((b) => b.point === point && calledFor(target, point, b.event));
  const floors = new Map<JsonValue, number>();
  for (const base of bases) {
    const { cpuMs, failure } = await measure(JSON.stringify(base.event));
    // A seed that already fails (or could not be measured) is the random fuzz's business, not the hunt's.
    if (failure === undefined && Number.isFinite(cpuMs))
      floors.set(base.event, Math.max(MIN_FLOOR_MS, cpuMs * FLOOR_OVER_BASELINE));
  }
  const running: Running[] = growthSeries(bases.filter((b) => floors.has(b.event))).map((series) => ({
    series,
    sizes: sizesOf(series, limits.maxEventChars),
    floorMs: floors.get(series.seed.event) ?? MIN_FLOOR_MS,
    points: [],
    done: false,
  }));

  let largestSize = 0;
  let starved = 0;
  let peak: HuntResult["peak"];
  let timeUp = false;
  for (let level = FIRST_SIZE; !timeUp && running.some((r) => !r.done); level *= 2) {
    for (const run of running) {
      if (run.done) continue;
      while (!run.done && (run.sizes[0] ?? Number.POSITIVE_INFINITY) - run.series.offset <= level) {
        if (performance.now() - started > options.timeMs) {
          timeUp = true;
          break;
        }
        const size = run.sizes.shift() ?? 0;
        const event = grownEvent(run.series, size);
        const eventJson = JSON.stringify(event);
        // A grown tool name no matcher selects would never reach the handler: that series ends here.
        const sent = eventJson.length <= limits.maxEventChars && schema.safeParse(event).success;
        if (!sent || !calledFor(target, point, event)) {
          run.done = true;
          break;
        }
        const { cpuMs, failure, starved: wasStarved } = await measure(eventJson);
        if (Number.isFinite(cpuMs)) run.points.push({ size, cpuMs });
        if (Number.isFinite(cpuMs) && cpuMs > (peak?.cpuMs ?? 0))
          peak = { input: growthInput(run.series, size), cpuMs };
        largestSize = Math.max(largestSize, size);
        if (wasStarved) {
          starved++;
          run.done = true;
        }
        if (failure !== undefined) {
          run.done = true;
          if (!failures.some((f) => f.code === failure.code)) {
            failures.push({
              ...failureFacts(failure),
              event,
              seed: options.seed,
              found: "grow",
              grown: growthInput(run.series, size),
            });
          }
        }
      }
      if (run.sizes.length === 0) run.done = true;
      if (timeUp) break;
    }
  }

  const flags: GrowthFlag[] = [];
  for (const run of running) {
    const first = fitGrowth(run.points, run.floorMs, limits.timeoutMs);
    if (!growsSuperLinearly(first)) continue;
    // Confirm on a second set of calls: minima only go down, so a noisy spell cannot survive both.
    const confirmed: GrowthPoint[] = [];
    for (const p of first.points) {
      const again = await measure(JSON.stringify(grownEvent(run.series, p.size)));
      confirmed.push({ size: p.size, cpuMs: Math.min(p.cpuMs, again.cpuMs) });
    }
    const fit = fitGrowth(confirmed, run.floorMs, limits.timeoutMs);
    if (!growsSuperLinearly(fit)) continue;
    const largest = fit.points[fit.points.length - 1]?.size ?? 0;
    const flag: GrowthFlag = {
      input: growthInput(run.series, largest),
      slope: fit.slope,
      projectedSize: fit.projectedSize,
      beyondCap: fit.projectedSize > maxSizeOf(run.series, limits.maxEventChars),
      points: fit.points,
      alike: 0,
    };
    const same = flags.findIndex((f) => f.input.path === flag.input.path);
    const existing = flags[same];
    if (existing === undefined) flags.push(flag);
    else if (flag.projectedSize < existing.projectedSize) flags[same] = { ...flag, alike: existing.alike + 1 };
    else flags[same] = { ...existing, alike: existing.alike + 1 };
  }
  return {
    series: running.length,
    calls,
    durationMs: Math.round(performance.now() - started),
    largestSize,
    complete: !timeUp,
    starved,
    ...(peak === undefined ? {} : { peak }),
    flags,
    failures,
  };
}

/** 16, 32, 64, … (plus the series' offset) above the value's own size, then the largest the event cap allows. */
function sizesOf(series: GrowthSeries, maxEventChars: number): number[] {
  const max = maxSizeOf(series, maxEventChars);
  const sizes: number[] = [];
  for (let size = FIRST_SIZE + series.offset; size < max; size = (size - series.offset) * 2 + series.offset)
    if (size > series.baseSize) sizes.push(size);
  if (max > series.baseSize) sizes.push(max);
  return sizes;
}

/** The size at which the grown event's JSON reaches the event cap. */
function maxSizeOf(series: GrowthSeries, maxEventChars: number): number {
  const baseLength = JSON.stringify(series.seed.event).length;
  const probe = Math.max(series.baseSize * 2, 64);
  const probeLength = JSON.stringify(grownEvent(series, probe)).length;
  const perUnit = (probeLength - baseLength) / Math.max(1, probe - series.baseSize);
  if (perUnit <= 0) return series.baseSize;
  return series.baseSize + Math.floor((maxEventChars - baseLength - 64) / perUnit);
}
