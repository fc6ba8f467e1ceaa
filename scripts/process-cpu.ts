import { readFileSync } from "node:fs";

/** CPU time used so far, in ms: this process's, and the other processes' (`pids`) from /proc. */
export interface CpuSplit {
  readonly host: number;
  readonly workers: number;
}

/**
 * This process's CPU time and that of `pids` (utime + stime from `/proc/<pid>/stat`, in clock ticks of
 * 10 ms): what a benchmark reads before and after a run to give CPU per call next to the wall clock, which
 * other load on a shared machine changes far less.
 */
export function cpuMsOf(pids: readonly number[]): CpuSplit {
  const { user, system } = process.cpuUsage();
  let workers = 0;
  for (const pid of pids) {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    workers += (Number(fields[11]) + Number(fields[12])) * 10;
  }
  return { host: (user + system) / 1000, workers };
}
