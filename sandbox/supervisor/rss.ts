import { readFile } from "node:fs/promises";

/**
 * A process's resident set size in bytes, read by the host from /proc (it works while the worker is busy
 * or stuck, and does not trust the worker to report itself). Undefined where /proc is missing (not Linux)
 * or the process is gone: RSS recycling is then off.
 */
export async function readRssBytes(pid: number): Promise<number | undefined> {
  let status: string;
  try {
    status = await readFile(`/proc/${pid}/status`, "latin1");
  } catch {
    return undefined;
  }
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(status);
  return match?.[1] === undefined ? undefined : Number(match[1]) * 1024;
}
