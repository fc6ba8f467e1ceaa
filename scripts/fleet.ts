/**
 * The fleet under faults, with figures: 4 host processes on one fresh PostgreSQL database (see
 * test/fleet/fleet-run.ts). `--restart` also restarts the PostgreSQL server mid-traffic
 * (pg_ctlcluster --skip-systemctl-redirect 15 main restart): only where no one else uses the server.
 *
 *   node --no-node-snapshot --import tsx scripts/fleet.ts [--restart] [--hosts 4] [--step-ms 1500] [--lanes mixed|split] [--json report.json]
 *
 * `--json` writes the whole report (every run with its calls, every pick-up) for a closer look.
 */
import { writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { parseArgs } from "node:util";
import { percentile, runFleet } from "../test/fleet/fleet-run.js";

const { values } = parseArgs({
  options: {
    restart: { type: "boolean" },
    hosts: { type: "string" },
    "step-ms": { type: "string" },
    json: { type: "string" },
    lanes: { type: "string" },
  },
});
const hosts = Number(values.hosts ?? 4);
const report = await runFleet({
  hosts,
  stepMs: Number(values["step-ms"] ?? 1_500),
  restart: values.restart === true,
  lanes: values.lanes === "split" ? "split" : "mixed",
  log: (line) => console.log(`  ${line}`),
});
if (values.json !== undefined) writeFileSync(values.json, JSON.stringify(report));
const load = loadavg()
  .map((l) => l.toFixed(1))
  .join(" ");
const fromCall = report.pickups.map((p) => p.fromCall);
const fromReturn = report.pickups.map((p) => p.fromReturn);
const { failures } = report.quarantine;
console.log(
  `fleet: ${hosts} hosts, ${report.runs.length} runs in ${(report.durationMs / 1000).toFixed(1)} s (load average ${load})`,
);
console.log(`  runs on a version not active or rolled out at their start: ${report.violations.length}`);
console.log(`  run errors: ${report.errors.length} (SIGKILLed ${report.killed.host}; the others never noticed)`);
console.log(
  `  pick-up of an activation, ${fromCall.length} samples: p50 ${percentile(fromReturn, 50)}–${percentile(fromCall, 50)} ms, p99 ${percentile(fromReturn, 99)}–${percentile(fromCall, 99)} ms (from the activation's return–call)`,
);
console.log(
  `  mallory's strikes before every host cut it off: ${report.strikes[0]} (bound ${failures} + ${hosts} hosts = ${failures + hosts}), after the release: ${report.strikes[1]} (bound ${failures} + ${hosts - 1} live hosts = ${failures + hosts - 1})`,
);
for (const o of report.outages)
  console.log(
    `  ${o.host} store outage after the ${o.fault}: unreachable at +${o.lostAt} ms, reachable again at ${o.backAt === undefined ? "never" : `+${o.backAt} ms`}`,
  );
if (report.restartedAt !== undefined) {
  const after = report.pickups.filter((p) => p.change > (report.restartedAt ?? 0));
  const first = Math.min(...after.map((p) => p.change));
  const hosts = after.filter((p) => p.change === first);
  console.log(
    `  first activation after the restart: picked up by ${hosts.length} hosts (LISTEN again), in ${Math.max(...hosts.map((p) => p.fromCall))} ms at most`,
  );
}
for (const s of report.stats) {
  console.log(
    `  ${s.host} decision log: recorded ${s.recorded}, written ${s.written} (rows in PostgreSQL ${s.rows}), written again after the outage ${s.requeued}, dropped ${s.droppedFull + s.droppedFailed} (counted; told by events: ${s.told}), pending ${s.pending}${s.closed ? "" : ", its close did not end within 60 s"}`,
  );
}
for (const v of report.violations.slice(0, 5)) console.log(`  violation: ${v}`);
for (const e of report.errors.slice(0, 5)) console.log(`  error on ${e.host}: ${e.message}`);
