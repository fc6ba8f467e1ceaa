/**
 * Probe: what a cold call costs before its handler runs — creating the isolate and evaluating the bundle
 * (`loadMs`) — next to the handler itself (`runMs`), for every example hook in hooks/ and a synthetic
 * ~760 KB bundle (under the 1 MB cap), with and without a prepared spare isolate, optionally while `--hogs`
 * busy-looping processes compete for the CPU. Not a test; prints a table. Run:
 *
 *   node --no-node-snapshot --import tsx scripts/probe-cold-call.ts [--rounds 20] [--hogs 0]
 *
 * Why it matters: until the load got its own timeout, a cold call's timeout (50 ms by default) covered
 * evaluating the bundle too, so a large bundle, or any bundle on a starved machine, timed out on every
 * cold call — including the call right after a timeout, whose isolate is always fresh.
 */
import { fork } from "node:child_process";
import { readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { IsolatePool } from "../sandbox/worker/index.js";
import { bundleHook } from "../src/bundler/index.js";
import { BundleHash, DEFAULT_LIMITS, type SandboxLimits, TenantId } from "../src/protocol/index.js";

const { values } = parseArgs({
  options: { rounds: { type: "string", default: "20" }, hogs: { type: "string", default: "0" } },
});
const ROUNDS = Number(values.rounds);
const HOGS = Number(values.hogs);

const limits: SandboxLimits = {
  memoryMb: DEFAULT_LIMITS.memoryMb,
  maxResultChars: DEFAULT_LIMITS.maxResultChars,
  maxStateChars: DEFAULT_LIMITS.maxStateChars,
  maxLogLines: DEFAULT_LIMITS.maxLogLines,
  maxLogChars: DEFAULT_LIMITS.maxLogChars,
  loadTimeoutMs: 10_000,
};
const eventJson = JSON.stringify({
  call: { id: "c1", name: "shell", args: { command: "ls -la" } },
  batch: { index: 0, size: 1 },
});

/** Many small functions and a table built at load: what a hook importing a sizeable library looks like. */
function syntheticBundle(): { hash: BundleHash; code: string } {
  const parts: string[] = [];
  for (let i = 0; i < 6000; i++) {
    parts.push(`function f${i}(x){return x.map(v=>v*${i}+${i % 7}).filter(v=>v%3!==${i % 3}).reduce((a,b)=>a+b,0);}`);
  }
  const table = `const TABLE={${Array.from({ length: 3000 }, (_, i) => `k${i}:"${"v".repeat(40)}${i}"`).join(",")}};`;
  const code = `var __isohook_bundle=(()=>{${parts.join("\n")}\n${table}\nconst RE=Object.keys(TABLE).map(k=>new RegExp("^"+k+"$"));\nreturn{default:{toolCall(){return RE.length>0?undefined:f1([1]);}}};})();`;
  return { hash: BundleHash.parse(`sha256-${"5".repeat(64)}`), code };
}

const hooksDir = fileURLToPath(new URL("../hooks/", import.meta.url));
const bundles: { name: string; hash: BundleHash; code: string }[] = [];
for (const name of readdirSync(hooksDir).sort()) {
  const built = await bundleHook(`${hooksDir}${name}`, { root: hooksDir });
  bundles.push({ name, hash: built.hash, code: built.code });
}
const synthetic = syntheticBundle();
bundles.push({ name: `synthetic (${Math.round(synthetic.code.length / 1024)} KB)`, ...synthetic });

const hogs = Array.from({ length: HOGS }, () => fork("-e", ["for(;;){}"], { execArgv: [] }));
const stats = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const at = (q: number) => (sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] ?? 0).toFixed(1);
  return `${at(0.5).padStart(6)} ${at(0.95).padStart(6)} ${(sorted.at(-1) ?? 0).toFixed(1).padStart(6)}`;
};
try {
  await new Promise((resolve) => setTimeout(resolve, 200));
  console.log(`cold call of each bundle, ${ROUNDS} rounds, ${HOGS} CPU hogs — ms: median p95 max`);
  console.log(
    `${"bundle".padEnd(28)}${"load (spare)".padStart(22)}${"load (no spare)".padStart(22)}${"handler".padStart(22)}`,
  );
  for (const bundle of bundles) {
    const rows = { spare: [] as number[], cold: [] as number[], handler: [] as number[] };
    for (const spare of [true, false]) {
      const pool = new IsolatePool({ spare });
      pool.load(bundle.hash, bundle.code, limits);
      for (let i = 0; i < ROUNDS; i++) {
        const tenantId = TenantId.parse(`t${i}`);
        if (spare) await new Promise((resolve) => setTimeout(resolve, 15)); // the spare refills after 10 ms of quiet
        const r = pool.call(bundle.hash, {
          tenantId,
          point: "tool.call",
          eventJson,
          ctxJson: "{}",
          timeoutMs: 10_000,
        });
        if (r.type !== "replied") throw new Error(`${bundle.name}: ${r.failure.code} ${r.failure.message}`);
        (spare ? rows.spare : rows.cold).push(r.loadMs ?? 0);
        if (!spare) rows.handler.push(r.runMs);
        pool.unload(bundle.hash);
        pool.load(bundle.hash, bundle.code, limits);
      }
      pool.dispose();
    }
    console.log(
      `${bundle.name.padEnd(28)}${stats(rows.spare).padStart(22)}${stats(rows.cold).padStart(22)}${stats(rows.handler).padStart(22)}`,
    );
  }
} finally {
  for (const hog of hogs) hog.kill();
}
