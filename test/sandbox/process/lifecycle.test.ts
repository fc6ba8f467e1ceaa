import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { startProcessExecutor } from "../../../sandbox/supervisor/create-executor.js";
import {
  createHookExecutor,
  ExecutorClosedError,
  ExecutorOptionsError,
  SandboxStartError,
} from "../../../sandbox/supervisor/index.js";
import { respawnDelayMs } from "../../../sandbox/supervisor/worker-slot.js";
import { TenantId } from "../../../src/protocol/index.js";
import { eventually, isAlive, STAND_IN_WORKER, standInCall, standInReply } from "./helpers/processes.js";

const tenant = TenantId.parse("acme");

describe("process executor lifecycle", () => {
  it("close() kills every worker, settles pending calls as unavailable and refuses new calls", async () => {
    const executor = await startProcessExecutor({ workers: 2 }, { workerEntry: STAND_IN_WORKER });
    const pids = executor.workers().map((w) => w.pid);
    expect(pids).toHaveLength(3);
    expect(pids.every(isAlive)).toBe(true);
    const stuck = executor.execute(...standInCall(tenant, { op: "hang" }));
    await new Promise((resolve) => setTimeout(resolve, 50));
    await executor.close();
    expect(await stuck).toMatchObject({ type: "failed", failure: { code: "unavailable" } });
    expect(pids.filter(isAlive)).toEqual([]);
    expect(executor.workers()).toEqual([]);
    await expect(executor.execute(...standInCall(tenant, {}))).rejects.toBeInstanceOf(ExecutorClosedError);
    await expect(executor.close()).resolves.toBeUndefined();
  });

  it("leaves no worker behind when its host is SIGKILLed or SIGTERMed, even a worker stuck in a call", async () => {
    const hostScript = fileURLToPath(new URL("./fixtures/host-child.ts", import.meta.url));
    const tsx = fileURLToPath(import.meta.resolve("tsx"));
    const killHost = async (signal: NodeJS.Signals): Promise<number[]> => {
      const host = spawn(process.execPath, ["--no-node-snapshot", "--import", tsx, hostScript], {
        stdio: ["ignore", "pipe", "inherit"],
      });
      const first = await new Promise<string>((resolve, reject) => {
        createInterface({ input: host.stdout }).once("line", resolve);
        host.once("exit", (code) => reject(new Error(`host exited early with ${code}`)));
      });
      const pids: number[] = JSON.parse(first);
      expect(pids).toHaveLength(2);
      expect(pids.every(isAlive)).toBe(true);
      host.kill(signal);
      return pids;
    };
    const pids = (await Promise.all([killHost("SIGKILL"), killHost("SIGTERM")])).flat();
    expect(await eventually(() => pids.every((pid) => !isAlive(pid)), 10_000)).toBe(true);
  });

  it("throws SandboxStartError with the worker's stderr when a worker cannot start", async () => {
    const broken = fileURLToPath(new URL("./fixtures/broken-worker.ts", import.meta.url));
    const started = startProcessExecutor({ workers: 1, spareWorker: false }, { workerEntry: broken });
    await expect(started).rejects.toBeInstanceOf(SandboxStartError);
    await expect(started).rejects.toThrow("broken worker for the start-up test");
  });

  it("aborts start-up when its signal aborts", async () => {
    const controller = new AbortController();
    const started = startProcessExecutor(
      { workers: 1, spareWorker: false, signal: controller.signal },
      { workerEntry: STAND_IN_WORKER },
    );
    controller.abort(new Error("not today"));
    await expect(started).rejects.toThrow("not today");
  });

  it("runs a call in a worker that is still starting once it is ready", async () => {
    const executor = await startProcessExecutor({ workers: 1, spareWorker: false }, { workerEntry: STAND_IN_WORKER });
    try {
      const outcome = await executor.execute(...standInCall(tenant, { nonce: 7 }));
      expect(standInReply(outcome).nonce).toBe(7);
    } finally {
      await executor.close();
    }
  });
});

describe("createHookExecutor modes", () => {
  it("starts the process executor by default and the inline one only when asked", async () => {
    const inline = await createHookExecutor({ mode: "inline", limits: { timeoutMs: 20 } });
    expect(inline.mode).toBe("inline");
    await inline.close();
    const processExecutor = await createHookExecutor({ workers: 1, spareWorker: false });
    expect(processExecutor.mode).toBe("process");
    await processExecutor.close();
  });
});

describe("createHookExecutor options", () => {
  const cases: [Record<string, unknown>, string][] = [
    [{ workers: 0 }, "Expected `workers` to be an integer from 1 and up, got `0`"],
    [{ workers: 1.5 }, "Expected `workers` to be an integer from 1 and up, got `1.5`"],
    [{ workers: "2" }, 'Expected `workers` to be an integer from 1 and up, got `"2"`'],
    [{ rssCapMb: -1 }, "Expected `rssCapMb` to be an integer from 1 and up, got `-1`"],
    [{ killGraceMs: 5 }, "Expected `killGraceMs` to be an integer from 10 and up, got `5`"],
    [{ spareWorker: "yes" }, 'Expected `spareWorker` to be a boolean, got `"yes"`'],
    [{ mode: "thread" }, 'Expected `mode` to be "process" or "inline", got `"thread"`'],
    [{ worker: 2 }, "Unknown executor option `worker`. Known options: mode, limits, workers"],
    [{ limits: { timeoutMs: 0 } }, "Invalid `limits.timeoutMs`, got `0`: "],
    [{ limits: { memoryMb: 4 } }, "Invalid `limits.memoryMb`, got `4`: "],
    [{ limits: { extra: 1 } }, "Invalid `limits`, got `an object`: "],
    [{ limits: { maxEventBytes: 2_048 } }, "`limits.maxEventBytes` is now `limits.maxEventChars`"],
    [{ mode: "inline", workers: 2 }, '`workers` applies to mode "process" only'],
    [{ onEvent: 3 }, "Expected `onEvent` to be a function, got `3`"],
  ];
  for (const [options, message] of cases) {
    it(`rejects ${JSON.stringify(options)} naming the option`, async () => {
      const created = createHookExecutor(options as never);
      await expect(created).rejects.toBeInstanceOf(ExecutorOptionsError);
      await expect(created).rejects.toThrow(message);
    });
  }
});

describe("respawn backoff", () => {
  it("respawns at once after one crash, then backs off doubling up to 5 s", () => {
    expect([1, 2, 3, 4, 5, 8, 20].map(respawnDelayMs)).toEqual([0, 100, 200, 400, 800, 5_000, 5_000]);
  });
});
