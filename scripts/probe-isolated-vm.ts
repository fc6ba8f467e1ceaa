/**
 * Probe: the isolated-vm behaviours the sandbox design rests on, each measured in its own child process
 * (some hang or abort it), for the build this Node loads (5.0.4 on Node 20/22, 7.0.1 on 24/26: the same
 * outcomes, except that 7.0.1 leaves the isolate alive after copying the rope message). Not a test; prints
 * one line per scenario. Run:
 *
 *   node --no-node-snapshot --import tsx scripts/probe-isolated-vm.ts
 *
 * What it shows (docs/architecture.md, "Rules learned from isolated-vm", builds on them):
 * - a JS timer cannot fire while `applySync` blocks the thread, so an in-thread watchdog cannot work;
 * - microtasks drain after the guest function returned (inside the timed call), so an async hook's
 *   settled value needs a second `applySync` to fetch;
 * - a promise left rejected without a handler makes `applySync` throw after the call, and isolated-vm
 *   reads its `message` outside the timeout: a looping getter hangs the thread for good; a rope message is
 *   flattened and copied to the host;
 * - FinalizationRegistry callbacks never run while the isolate is entered only synchronously; entered
 *   with async `apply` they run on isolated-vm's thread pool and a spinning one blocks every later call;
 * - eval and new Function work inside isolates (nothing of the host to reach);
 * - which memory bombs end as a memory-limit disposal and which abort the whole process, and what a fatal
 *   out-of-memory prints on stderr before it aborts;
 * - `applySync`'s `timeout` is wall-clock: with every core busy a spinning call is stopped at its timeout
 *   having had only part of it in CPU time; `isolate.cpuTime` after the call is the thread's CPU time;
 * - `isolate.cpuTime` read during a call (from a host callback the guest calls) counts the running slice
 *   by the wall clock, and no other thread can read it: an `Isolate` handle cannot be posted to a worker.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { MessageChannel } from "node:worker_threads";
import * as ivm from "../sandbox/worker/isolated-vm.js";
import { threadCpuMs } from "../sandbox/worker/thread-cpu.js";

type Scenario = () => unknown | Promise<unknown>;

function isolateWith(source: string, memoryLimit = 16) {
  const isolate = new ivm.Isolate({ memoryLimit });
  const context = isolate.createContextSync();
  const fns = isolate.compileScriptSync(source).runSync(context, { reference: true });
  const fn = (i: number) => fns.getSync(i, { reference: true });
  return { isolate, fn };
}

const ROPE = 'let s = "ab"; for (let i = 0; i < 27; i++) s = s + s;';

const scenarios: Record<string, Scenario> = {
  "timer-during-applySync": () => {
    const { fn } = isolateWith("[function spin() { const end = Date.now() + 200; while (Date.now() < end) {} }]");
    const started = performance.now();
    let firedAt = -1;
    setTimeout(() => {
      firedAt = performance.now() - started;
    }, 20);
    fn(0).applySync(undefined, [], { timeout: 1_000 });
    const returnedAt = performance.now() - started;
    return new Promise((resolve) =>
      setTimeout(
        () => resolve({ timerDueMs: 20, callReturnedMs: round(returnedAt), timerFiredMs: round(firedAt) }),
        30,
      ),
    );
  },
  "microtasks-after-return": () => {
    const { fn } = isolateWith(
      '[function start() { let v = "pending"; Promise.resolve().then(() => { v = "settled"; globalThis.v = v; }); return v; }, function read() { return globalThis.v; }]',
    );
    const first = fn(0).applySync(undefined, [], { timeout: 100 });
    return { returnedByTheCall: first, seenByASecondCall: fn(1).applySync(undefined, [], { timeout: 100 }) };
  },
  "unhandled-rejection": () => {
    const { fn } = isolateWith('[function f() { Promise.reject(new Error("nobody listens")); return "fine"; }]');
    try {
      return { returned: fn(0).applySync(undefined, [], { timeout: 100 }) };
    } catch (error) {
      return { applySyncThrew: String(error) };
    }
  },
  "unhandled-rejection-message-getter-loops": () => {
    const { fn } = isolateWith(
      '[function f() { const e = new Error("x"); Object.defineProperty(e, "message", { get() { for (;;) {} } }); Promise.reject(e); return "fine"; }]',
    );
    return { returned: fn(0).applySync(undefined, [], { timeout: 100 }) };
  },
  "unhandled-rejection-rope-message": () => {
    const { fn, isolate } = isolateWith(`[function f() { ${ROPE} Promise.reject(new Error(s)); return "fine"; }]`);
    const started = performance.now();
    let outcome: string;
    try {
      outcome = String(fn(0).applySync(undefined, [], { timeout: 100 }));
    } catch (error) {
      outcome = `threw a ${String(error instanceof Error ? error.message : error).length}-character message`;
    }
    return { outcome, ms: round(performance.now() - started), disposed: isolate.isDisposed, maxRssMb: maxRssMb() };
  },
  "finalization-registry-sync-only": () => {
    const { fn } = isolateWith(
      "let ran = 0, r; [function reg() { r = new FinalizationRegistry(() => { ran++; }); for (let i = 0; i < 1000; i++) r.register({ i }, i); }, function churn() { let g; for (let i = 0; i < 300; i++) { g = []; for (let j = 0; j < 10000; j++) g.push({ j, s: 'x' + j }); } }, function count() { return ran; }]",
    );
    fn(0).applySync();
    for (let i = 0; i < 3; i++) fn(1).applySync(undefined, [], { timeout: 10_000 });
    return { callbacksRan: fn(2).applySync() };
  },
  "finalization-registry-async-spin": async () => {
    const { fn } = isolateWith(
      "let r; [function reg() { r = new FinalizationRegistry(() => { for (;;) {} }); for (let i = 0; i < 1000; i++) r.register({ i }, i); }, function churn() { let g; for (let i = 0; i < 300; i++) { g = []; for (let j = 0; j < 10000; j++) g.push({ j, s: 'x' + j }); } }, function ok() { return 'ok'; }]",
    );
    fn(0).applySync();
    for (let i = 0; i < 3; i++) await fn(1).apply(undefined, [], { timeout: 10_000 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    return { afterward: fn(2).applySync(undefined, [], { timeout: 100 }) };
  },
  "timeout-is-wall-clock-under-load": async () => {
    const { fn, isolate } = isolateWith("[function spin() { for (;;) {} }]");
    const hogs = await cpuHogs(availableParallelism() + 1);
    try {
      const cpuBefore = isolate.cpuTime;
      const threadBefore = threadCpuMs();
      const started = performance.now();
      let threw = "";
      try {
        fn(0).applySync(undefined, [], { timeout: 100 });
      } catch (error) {
        threw = String(error instanceof Error ? error.message : error);
      }
      const wallMs = round(performance.now() - started);
      const cpuTimeMs = round(Number(isolate.cpuTime - cpuBefore) / 1e6);
      return {
        threw,
        timeoutMs: 100,
        wallMs,
        isolateCpuTimeMs: cpuTimeMs,
        threadCpuMs: round(threadCpuMs() - threadBefore),
      };
    } finally {
      for (const hog of hogs) hog.kill("SIGKILL");
    }
  },
  "cpuTime-read-during-a-call": async () => {
    const isolate = new ivm.Isolate({ memoryLimit: 16 });
    const context = isolate.createContextSync();
    let seen = { cpuMs: -1, wallMs: -1 };
    const before = { cpu: isolate.cpuTime, wall: isolate.wallTime };
    const probe = new ivm.Reference(() => {
      seen = {
        cpuMs: round(Number(isolate.cpuTime - before.cpu) / 1e6),
        wallMs: round(Number(isolate.wallTime - before.wall) / 1e6),
      };
    });
    context.global.setSync("probe", probe);
    const fn = isolate
      .compileScriptSync(
        "(function f() { const end = Date.now() + 50; while (Date.now() < end) {} Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50); probe.applySync(); })",
      )
      .runSync(context, { reference: true });
    const threadBefore = threadCpuMs();
    fn.applySync(undefined, [], { timeout: 1_000 });
    const after = round(Number(isolate.cpuTime - before.cpu) / 1e6);
    const thread = round(threadCpuMs() - threadBefore);
    // What a worker thread would receive of the isolate: nothing it can read `cpuTime` from.
    const { port1, port2 } = new MessageChannel();
    let posted: string;
    try {
      const received = new Promise<unknown>((resolve) => port2.once("message", resolve));
      port1.postMessage(isolate);
      const value = (await received) as { cpuTime?: unknown };
      posted = `arrives as ${JSON.stringify(value)}, cpuTime ${typeof value.cpuTime}`;
    } catch (error) {
      posted = `throws ${String(error instanceof Error ? error.name : error)}`;
    } finally {
      port1.close();
    }
    return {
      spin: 50,
      sleep: 50,
      inCallback: seen,
      cpuTimeAfterTheCall: after,
      threadCpuMs: thread,
      postIsolateToAWorker: posted,
    };
  },
  "eval-and-function-inside": () => {
    const { fn } = isolateWith('[function f() { return eval("1 + 1") + new Function("return 1")(); }]');
    return { result: fn(0).applySync() };
  },
  ...Object.fromEntries(
    (
      [
        ["bomb-object-arrays", "const a = []; for (;;) a.push(new Array(100000).fill({}));"],
        ["bomb-small-objects", 'const a = []; for (;;) a.push({ a: a.length, b: "k" + a.length });'],
        ["bomb-flat-strings", 'const a = []; for (;;) a.push("x".repeat(1 << 20) + a.length);'],
        ["bomb-map", "const m = new Map(); for (let i = 0; ; i++) m.set(i, { i });"],
        ["bomb-array-fill-1e8", "new Array(1e8).fill(0);"],
        ["bomb-arraybuffers", "const a = []; for (;;) a.push(new ArrayBuffer(1 << 20));"],
      ] as const
    ).map(([name, body]): [string, Scenario] => [
      name,
      () => {
        const { fn, isolate } = isolateWith(`[function f() { ${body} }]`, 32);
        try {
          fn(0).applySync(undefined, [], { timeout: 10_000 });
          return { outcome: "returned" };
        } catch (error) {
          return { outcome: String(error).slice(0, 80), disposed: isolate.isDisposed, maxRssMb: maxRssMb() };
        }
      },
    ]),
  ),
};

/** `count` child processes spinning on the CPU, started (they print once they spin). */
async function cpuHogs(count: number): Promise<ChildProcess[]> {
  const hogs = Array.from({ length: count }, () =>
    spawn(process.execPath, ["-e", "process.stdout.write('x'); for (;;) {}"], { stdio: ["ignore", "pipe", "ignore"] }),
  );
  await Promise.all(hogs.map((hog) => new Promise((resolve) => hog.stdout?.once("data", resolve))));
  return hogs;
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}

function maxRssMb(): number {
  return Math.round(process.resourceUsage().maxRSS / 1024);
}

const HANG_MS = 5_000;
const scenario = process.argv[2];
if (scenario !== undefined) {
  const run = scenarios[scenario];
  if (run === undefined) throw new Error(`unknown scenario ${scenario}`);
  console.log(JSON.stringify(await run()));
  process.exit(0);
} else {
  const self = fileURLToPath(import.meta.url);
  for (const name of Object.keys(scenarios)) {
    const child = spawnSync(process.execPath, ["--no-node-snapshot", "--import", "tsx", self, name], {
      timeout: HANG_MS,
      killSignal: "SIGKILL",
      encoding: "utf8",
    });
    const line = child.stdout.trim().split("\n").at(-1) ?? "";
    // What a dying process printed last that says why (V8's or isolated-vm's out-of-memory report).
    const why = /^.*(out of memory|is_heap_oom|Fatal).*$/im.exec(child.stderr)?.[0];
    const verdict =
      child.signal === "SIGKILL"
        ? `hung: killed after ${HANG_MS / 1000} s`
        : child.signal !== null
          ? `process died: ${child.signal}${why === undefined ? "" : ` after printing ${JSON.stringify(why.slice(0, 80))}`}`
          : line;
    console.log(`${name.padEnd(42)} ${verdict}`);
  }
}
