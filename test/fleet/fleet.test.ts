import { describe, expect, it } from "vitest";
import { postgresAvailable } from "../store/helpers/postgres.js";
import { runFleet } from "./fleet-run.js";

const HOSTS = 4;

/**
 * Four host processes on one PostgreSQL database under faults (see fleet-run.ts). The PostgreSQL restart
 * runs only in `scripts/fleet.ts --restart` (other suites share the server); here every isohook connection
 * to the fleet's database is terminated, and then the database refuses connections for a while, which is
 * what a restart is to the hosts. Timings are the script's to print, not asserted here.
 */
describe.runIf(await postgresAvailable())("a fleet of four hosts under faults", { timeout: 900_000 }, () => {
  it("decides on active versions only, quarantines once for all, survives a killed host, a cut and a refusing database, loses no log record silently", async () => {
    const report = await runFleet({ hosts: HOSTS, stepMs: 1_500, restart: false });
    const live = report.hosts.filter((h) => h !== report.killed.host);
    expect(report.runs.length).toBeGreaterThan(100);

    // Every run decided on one version, active (or rolled out) when it started.
    expect(report.violations).toEqual([]);
    expect(report.errors).toEqual([]);
    expect(new Set(report.runs.filter((r) => r.tenant === "globex").map((r) => r.version))).toEqual(new Set([1, 2]));

    // Each live host picked up each acme activation.
    const flips = report.pickups.filter((p) => p.host === live[0]).length;
    expect(flips).toBeGreaterThanOrEqual(4);
    for (const host of live) expect(report.pickups.filter((p) => p.host === host)).toHaveLength(flips);

    // mallory: cut off everywhere, twice (before and after its release), after at most K strikes plus one
    // per host in that episode. Each host runs two lanes, yet a bundle that has not made a healthy call runs
    // one call at a time per host, each after the store counted the last one's strike (suspect-gate.ts).
    const K = report.quarantine.failures;
    expect(report.strikes[0]).toBeGreaterThan(0);
    expect(report.strikes[0]).toBeLessThanOrEqual(K + report.hosts.length);
    expect(report.strikes[1]).toBeGreaterThan(0);
    expect(report.strikes[1]).toBeLessThanOrEqual(K + live.length);
    for (const host of live) {
      expect(report.cutOff[0]).toContain(host);
      expect(report.cutOff[1]).toContain(host);
    }

    // The others went on through the outage and after the kill.
    for (const host of live) {
      const mine = report.runs.filter((r) => r.host === host);
      expect(mine.some((r) => r.startedAt > report.outageAt && r.endedAt < report.killed.at)).toBe(true);
      expect(mine.some((r) => r.startedAt > report.killed.at)).toBe(true);
    }

    // While the database refused connections every host told so, went on deciding on the versions it had,
    // and came back by itself; what its decision log could not write meanwhile was written after.
    const refused = report.outages.filter((o) => o.fault === "refuse");
    expect(refused.map((o) => o.host).sort()).toEqual([...report.hosts].sort());
    for (const o of refused) expect(o.backAt).toBeGreaterThan(o.lostAt);
    for (const host of live) {
      const during = report.runs.filter(
        (r) => r.host === host && r.startedAt > report.down.at && r.endedAt < report.down.upAt && r.calls.length > 0,
      );
      expect(during.length, `${host}'s runs started while the database refused connections`).toBeGreaterThan(0);
    }
    for (const s of report.stats) {
      expect(s.requeued).toBeGreaterThan(0);
      expect(s.droppedFailed).toBe(0);
    }

    // Every decision-log record is written or counted as dropped; what was written is in the table.
    expect(report.stats.map((s) => s.host).sort()).toEqual(live);
    for (const s of report.stats) {
      expect(s.closed).toBe(true);
      expect(s.pending).toBe(0);
      expect(s.recorded).toBeGreaterThan(0);
      // `recorded` counts what entered the buffer; a full buffer's drops (`droppedFull`) never did.
      expect(s.written + s.droppedFailed).toBe(s.recorded);
      expect(s.rows).toBe(s.written);
      // …and every drop was told as an event too.
      expect(s.told).toBe(s.droppedFull + s.droppedFailed);
    }
  });
});
