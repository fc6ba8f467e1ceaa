export { type CpuStats, cpuStats } from "./cpu-stats.js";
export { fuzzDictionary } from "./dictionary.js";
export { eventArbitrary, sampleEvent } from "./event-arbitrary.js";
export { type FuzzBundleOptions, type FuzzReport, fuzzBundle, type PointReport } from "./fuzz-bundle.js";
export { type FuzzPointOptions, type FuzzPointResult, fuzzPoint, type OutcomeCounts } from "./fuzz-point.js";
export type { FuzzFailure, FuzzTarget, GrowthInput, SeedEvent } from "./fuzz-target.js";
export { fitGrowth, type GrowthFit, type GrowthPoint, growsSuperLinearly, SUPER_LINEAR_SLOPE } from "./growth-fit.js";
export { type GrowthFlag, type HuntOptions, type HuntResult, huntTimeouts } from "./hunt-timeouts.js";
