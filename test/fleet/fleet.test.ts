import { describe, expect, it } from "vitest";
import { postgresAvailable } from "../store/helpers/postgres.js";
import { runFleet } from "./fleet-run.js";

const HOSTS = 4;

/**
 * Four host processes on one PostgreSQL database under faults (see fleet-run.ts). The PostgreSQL restart
 * runs only in `scripts/fleet.ts --restart` (other suites share the server); here every isohook connection
 * to the fleet's database is terminated instead. Timings are the script's to print, not asserted here.
 */
describe.runIf(await postgresAvailable())("a fleet of four hosts under faults", { timeout: 900_000 }, () => {
  it("decides on active versions only, quarantines once for all, survives a killed host and a cut database, loses no log record silently", async () => {
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

    // mallory: cut off everywhere after at most K + hosts timeouts, twice (before and after its release).
    const bound = report.quarantine.failures + HOSTS;
    expect(report.strikes[0]).toBeGreaterThanOrEqual(report.quarantine.failures);
    expect(report.strikes[0]).toBeLessThanOrEqual(bound);
    expect(report.strikes[1]).toBeGreaterThanOrEqual(report.quarantine.failures);
    expect(report.strikes[1]).toBeLessThanOrEqual(bound);
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

    // Every decision-log record is written or counted as dropped; what was written is in the table.
    expect(report.stats.map((s) => s.host).sort()).toEqual(live);
    for (const s of report.stats) {
      expect(s.pending).toBe(0);
      expect(s.recorded).toBeGreaterThan(0);
      expect(s.written + s.droppedFull + s.droppedFailed).toBe(s.recorded);
      expect(s.rows).toBe(s.written);
    }
  });
});
