import { type ChildProcess, spawn } from "node:child_process";
import { availableParallelism } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startProcessExecutor } from "../../../sandbox/supervisor/create-executor.js";
import type { ProcessExecutor } from "../../../sandbox/supervisor/process-executor.js";
import { MIN_WALL_BACKSTOP_FACTOR, maxWallBackstopOf, type SandboxResult } from "../../../src/protocol/index.js";
import { hookCall, hooksBundle } from "../bundle-fixtures.js";
import { tenantOn } from "./helpers/processes.js";

/**
 * Timeouts are CPU time, so a busy machine cannot fake one: with every core taken by spinning processes
 * (two per core, on top of whatever else runs here), a hook whose work takes about 1.2 × its timeout by
 * the clock still decides (but for at most one call in 8 that the machine starved to under a fifth of the
 * share it gave the call before, stopped by the backstop within their CPU time); a spinning hook still
 * ends `timeout`, stopped by the wall-clock backstop, which the worker sizes by the load so that the
 * spinner has used its CPU time by then.
 *
 * Each call's work is sized to the share of a core the worker got in the call before (this shared
 * machine's load swings tenfold within seconds): about 1.2 × the timeout by the clock, so a wall-clock
 * timeout would fail it (the test checks that some call did take longer than its timeout: without that it
 * could not fail), while the backstop (1.5 × the load's stretch) leaves room for the share to drop by more
 * than the stretch from one call to the next.
 */

const TIMEOUT_MS = 30;
const KILL_GRACE_MS = 1_000;

const WORKER = hooksBundle(`{
  toolCall(event) {
    let x = 0;
    for (let i = 0; i < event.call.args.n; i++) x = (x * 31 + i) % 1000003;
    return { type: "block", reason: "worked:" + (x >= 0) };
  },
}`);
const SPINNER = hooksBundle(`{ toolCall() { for (;;) {} } }`);

let executor: ProcessExecutor;
let hogs: ChildProcess[] = [];

beforeAll(async () => {
  executor = await startProcessExecutor({ workers: 2, killGraceMs: KILL_GRACE_MS, limits: { timeoutMs: 1_000 } });
});
afterAll(async () => {
  for (const hog of hogs) hog.kill("SIGKILL");
  await executor.close();
});

const work = (n: number, timeoutMs: number) =>
  executor.execute(
    ...hookCall(
      tenantOn((id) => executor.shardOf(id), 0, "worker"),
      WORKER,
      {
        event: { call: { id: "c1", name: "shell", args: { n } }, batch: { index: 0, size: 1 } },
        timeoutMs,
      },
    ),
  );

/** `count` processes spinning, each started (it printed) before this resolves. */
async function spinning(count: number): Promise<ChildProcess[]> {
  const started = Array.from({ length: count }, () =>
    spawn(process.execPath, ["-e", "process.stdout.write('x'); for (;;) {}"], { stdio: ["ignore", "pipe", "ignore"] }),
  );
  await Promise.all(started.map((hog) => new Promise((resolve) => hog.stdout?.once("data", resolve))));
  return started;
}

describe("CPU-time timeouts on a machine whose every core is busy", () => {
  it("keeps healthy hooks decided and still ends spinning ones as timeout within the backstop", async () => {
    const timed = async (n: number) => {
      const probe = await work(n, 1_000);
      expect(probe.type).toBe("replied");
      return probe;
    };
    // Iterations per ms of CPU time, on calls long enough (≥ 20 ms) to be measured by the thread's CPU clock.
    let perMs = 0;
    for (let i = 0, n = 200_000; i < 8 && perMs === 0; i++) {
      const probe = await timed(n);
      if (probe.runMs >= 20 && probe.cpuMs > 0) perMs = n / probe.cpuMs;
      n *= 4;
    }
    expect(perMs).toBeGreaterThan(0);

    // Two per core: the worker then gets well under a core (a single hog per core left it ~0.8 of one at
    // times, so no healthy call ran past its timeout by the clock, and the test could not show anything).
    hogs = await spinning(2 * availableParallelism());
    const spinnerTenant = tenantOn((id) => executor.shardOf(id), 1, "spinner");
    // The spinner keeps spinning on the other worker until the healthy calls are done: steady contention.
    let healthyDone = false;
    const spins = (async () => {
      const spun: SandboxResult[] = [];
      do spun.push(await executor.execute(...hookCall(spinnerTenant, SPINNER, { timeoutMs: TIMEOUT_MS })));
      while (!healthyDone);
      return spun;
    })();
    // Each call's work is sized to the share of a core the worker got in the call before (its CPU time over
    // its run time): about 1.2 × the timeout by the clock, at most 0.8 × the timeout in CPU time.
    // Starting cautiously (the first moments of the hogs are the worst), and growing the work while calls
    // stay short.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const healthy: SandboxResult[] = [];
    let share = 0.05;
    // 16 calls, and more (up to 48) until the hogs have starved one past its timeout by the clock: the
    // scheduler favours a thread that slept, so on some machines a run of calls gets a whole core.
    const starved = () => healthy.some((r) => r.runMs > TIMEOUT_MS);
    for (let i = 0; i < 16 || (i < 48 && !starved()); i++) {
      const workMs = Math.min(0.8 * TIMEOUT_MS, 1.2 * TIMEOUT_MS * share);
      const result = await work(Math.max(1, Math.round(perMs * workMs)), TIMEOUT_MS);
      healthy.push(result);
      share = result.runMs >= 10 ? Math.min(1, result.cpuMs / result.runMs) : Math.min(1, share * 2);
    }
    healthyDone = true;
    const spun = await spins;
    for (const hog of hogs) hog.kill("SIGKILL");
    hogs = [];

    // A call the machine gives under a fifth of what it got the call before can still reach the backstop
    // (seen at a load average of 15 from other suites): at most one in 8, each stopped by the clock within
    // its CPU time. Were timeouts wall-clock, most of these calls would fail (they are sized to 1.2 × it).
    const failed = healthy.filter((r) => r.type === "failed");
    const seen = `cpu/run ms: ${healthy.map((r) => `${r.cpuMs.toFixed(1)}/${r.runMs.toFixed(0)}`).join(" ")}`;
    expect(failed.length, seen).toBeLessThanOrEqual(healthy.length / 8);
    for (const r of failed) {
      expect(r.type === "failed" && r.failure.message, seen).toContain("wall-clock backstop");
      expect(r.cpuMs, seen).toBeLessThan(TIMEOUT_MS);
    }
    for (const result of healthy) expect(result.cpuMs).toBeLessThan(TIMEOUT_MS);
    // The hogs starved the calls: a wall-clock timeout would have failed at least one of them.
    expect(Math.max(...healthy.map((r) => r.runMs)), seen).toBeGreaterThan(TIMEOUT_MS);

    // Stopped by the worker at its wall-clock backstop, which it sizes by the load (1.5–5 × the timeout,
    // late by what the busy machine adds), never by the host's kill, which would come KILL_GRACE_MS later.
    for (const result of spun) {
      expect(result).toMatchObject({ type: "failed", failure: { code: "timeout" } });
      expect(result.runMs).toBeGreaterThanOrEqual(MIN_WALL_BACKSTOP_FACTOR * TIMEOUT_MS * 0.9);
      expect(result.runMs).toBeLessThan(maxWallBackstopOf(TIMEOUT_MS) + KILL_GRACE_MS);
    }
    // Where the worker stopped a spin before the maximum backstop, it had sized it by the hogs' load, so the
    // spinner had used its CPU time by then in most of them: a CPU-attributed timeout, a quarantine strike (a
    // backstop left at its 1.5 × minimum would stop them short of it). A machine starving the worker to under
    // a fifth of a core binds every spin at the maximum: then there is nothing to check.
    const spunSeen = `cpu/run ms: ${spun.map((r) => `${r.cpuMs.toFixed(1)}/${r.runMs.toFixed(0)}`).join(" ")}`;
    const early = spun.filter((r) => r.runMs < maxWallBackstopOf(TIMEOUT_MS));
    const earlyOverCpu = early.filter((r) => r.cpuMs >= TIMEOUT_MS);
    expect(earlyOverCpu.length, spunSeen).toBeGreaterThanOrEqual(Math.ceil(early.length / 2));
  });
});
