import { z } from "zod";
import { Count, Iso, Logs, Point } from "./json-output-fields.js";

/** Run events as `run` and `demo` print them, and the `stats` computed from them (or from the decision log). */

/** A run event (`run --json`): the library's RunEvent with `at` as an ISO string. */
export const RunEventLine = z
  .looseObject({
    type: z.enum([
      "run.started",
      "run.warning",
      "turn.started",
      "hooks.decided",
      "hook.called",
      "hook.shadowed",
      "message.added",
      "inbound.dropped",
      "model.delta",
      "model.replied",
      "tool.finished",
      "quarantine.entered",
      "quarantine.exited",
      "run.finished",
    ]),
    at: Iso.optional(),
    until: Iso.optional(),
    logs: Logs.optional(),
  })
  .meta({ title: "run event" });

const Percentiles = z.strictObject({ p50: z.number(), p99: z.number() }).meta({ description: "ms, nearest rank" });

export const StatsOutput = z.strictObject({
  tenantId: z.string(),
  from: z
    .string()
    .nullable()
    .meta({ description: "the JSON lines read (a run's or demo's --json output); null: the store's decision log" }),
  since: Iso.nullable(),
  calls: Count,
  decisions: z.record(z.string(), Count).meta({ description: "decided calls by result type (noop: returned nothing)" }),
  failures: z.record(z.string(), Count).meta({ description: "failed calls by failure code" }),
  points: z.array(
    z.strictObject({
      point: Point,
      calls: Count,
      runMs: Percentiles,
      cpuMs: Percentiles,
      waitedMs: Percentiles.meta({ description: "queued + load + run, what the caller waited" }),
    }),
  ),
});

/** Clock times of run events (ms since the epoch in the library), as ISO strings in CLI output. */
const TIME_FIELDS = ["at", "until"] as const;

/**
 * A run event as its `--json` line: the library's event with clock times (`at`, `until`) as ISO strings.
 */
export function eventJson(event: object): object {
  const fields: Record<string, unknown> = { ...event };
  for (const key of TIME_FIELDS) {
    const value = fields[key];
    if (typeof value === "number") fields[key] = new Date(value).toISOString();
  }
  return fields;
}
