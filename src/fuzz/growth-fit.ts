/** A measured size and the least CPU time any of its repeated calls took. */
export interface GrowthPoint {
  readonly size: number;
  readonly cpuMs: number;
}

export interface GrowthFit {
  /** d log(cpu) / d log(size): 1 is linear, 2 quadratic. */
  readonly slope: number;
  /** The same slope between the two largest points alone. */
  readonly tailSlope: number;
  /** The size at which the fitted curve reaches `timeoutMs`. */
  readonly projectedSize: number;
  /** The points the fit used (largest sizes, above the noise floor). */
  readonly points: readonly GrowthPoint[];
}

/** A slope at or above this is super-linear growth worth flagging. */
export const SUPER_LINEAR_SLOPE = 1.5;
/** Fewer points than this above the floor say nothing about a slope. */
const MIN_POINTS = 3;
/** The fit uses the largest sizes only: below them, fixed per-call costs flatten the curve. */
const MAX_POINTS = 5;

/**
 * Fits log(cpu) = a + slope·log(size) by least squares over the largest sizes whose CPU time is at least
 * `floorMs` (below it a call's fixed cost and the noise of a loaded machine dominate: there, a constant
 * looks like any slope). Returns undefined with fewer than three usable points. Fixed costs bend the curve
 * down, never up, so they cannot make a linear hook look super-linear; noise can, which is why callers
 * pass per-size minima of repeated calls.
 */
export function fitGrowth(points: readonly GrowthPoint[], floorMs: number, timeoutMs: number): GrowthFit | undefined {
  const usable = points
    .filter((p) => p.size > 0 && p.cpuMs >= floorMs)
    .sort((a, b) => a.size - b.size)
    .slice(-MAX_POINTS);
  if (usable.length < MIN_POINTS) return undefined;
  const line = logLogLine(usable);
  if (line === undefined) return undefined;
  const { slope, intercept } = line;
  const projectedSize = slope > 0 ? Math.exp((Math.log(timeoutMs) - intercept) / slope) : Number.POSITIVE_INFINITY;
  const [before, last] = usable.slice(-2);
  const tailSlope =
    before === undefined || last === undefined
      ? slope
      : Math.log(last.cpuMs / before.cpuMs) / Math.log(last.size / before.size);
  return {
    slope: Math.round(slope * 100) / 100,
    tailSlope: Math.round(tailSlope * 100) / 100,
    projectedSize: Math.round(projectedSize),
    points: usable,
  };
}

/**
 * Growth worth flagging: super-linear over the fit, still at its largest sizes, and already below them. A
 * curve that turns linear again at the top made one step (a collection, a change of engine tier), not a
 * growth that would reach the timeout; so did one that is flat up to its largest size and jumps there (a
 * collection the largest event set off: a linear hook measured 0.23, 0.20 and 3.9 ms at 256 KB, 512 KB and
 * 1 MB, every time, on Node 26).
 */
export function growsSuperLinearly(fit: GrowthFit | undefined): fit is GrowthFit {
  if (fit === undefined || fit.slope < SUPER_LINEAR_SLOPE || fit.tailSlope < SUPER_LINEAR_SLOPE) return false;
  const below = logLogLine(fit.points.slice(0, -1));
  return below !== undefined && below.slope >= SUPER_LINEAR_SLOPE;
}

/** The least-squares line through the points on a log-log scale; undefined for fewer than two sizes. */
function logLogLine(points: readonly GrowthPoint[]): { slope: number; intercept: number } | undefined {
  const xs = points.map((p) => Math.log(p.size));
  const ys = points.map((p) => Math.log(p.cpuMs));
  const meanX = xs.reduce((s, x) => s + x, 0) / xs.length;
  const meanY = ys.reduce((s, y) => s + y, 0) / ys.length;
  let sxy = 0;
  let sxx = 0;
  for (let i = 0; i < xs.length; i++) {
    const dx = (xs[i] ?? 0) - meanX;
    sxy += dx * ((ys[i] ?? 0) - meanY);
    sxx += dx * dx;
  }
  if (!(sxx > 0)) return undefined;
  const slope = sxy / sxx;
  return { slope, intercept: meanY - slope * meanX };
}
