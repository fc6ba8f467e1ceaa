import { z } from "zod";
import type { JsonValue } from "../protocol/index.js";
import { type Printed, printable } from "../terminal/index.js";
import type { GateReport } from "./gate-report.js";

/** Enough of a stored report to show it; older or newer reports with extra fields still read. */
const StoredReport = z.looseObject({
  type: z.enum(["passed", "rejected"]),
  reasons: z.array(z.looseObject({ code: z.string(), message: z.string() })),
  warnings: z.array(z.string()),
  fixtures: z.looseObject({ file: z.string(), total: z.number(), passed: z.number() }).nullable(),
  fuzz: z.array(z.looseObject({ point: z.string(), runs: z.number(), passed: z.boolean(), seed: z.number() })),
  replay: z
    .looseObject({ compared: z.number(), agreed: z.number(), differed: z.number(), newFailures: z.number() })
    .optional(),
  durationMs: z.number(),
});
type ReportView = z.infer<typeof StoredReport>;

/**
 * A gate report as lines for people: the verdict, fixtures, fuzz per point, then every reason and warning.
 * Accepts the report as stored (JSON) or as returned by the gate. Every line is `printable`; a reason whose
 * message lists problems gives one line each, indented under the reason (the gate escapes tenant text where
 * it builds a message, so only its own line breaks remain; a stored message with a raw one stays indented).
 */
export function formatGateReport(report: GateReport | JsonValue | null): Printed[] {
  const parsed = StoredReport.safeParse(report);
  if (!parsed.success) return [printable("(no gate report recorded)")];
  const r: ReportView = parsed.data;
  const lines = [`${r.type} in ${(r.durationMs / 1000).toFixed(1)} s`];
  if (r.fixtures) lines.push(`fixtures: ${r.fixtures.passed}/${r.fixtures.total} passed (${r.fixtures.file})`);
  for (const f of r.fuzz) {
    const events = `${f.runs} event${f.runs === 1 ? "" : "s"}`;
    lines.push(
      `fuzz ${f.observe ? "observe " : ""}${f.point}: ${f.passed ? `${events}, all valid` : `failed at event ${f.runs}`} (seed ${f.seed})`,
    );
  }
  if (r.replay) {
    const { compared, agreed, differed, newFailures } = r.replay;
    const failed = newFailures > 0 ? ` (${newFailures} new failure${newFailures === 1 ? "" : "s"})` : "";
    lines.push(
      `replay: ${compared} recorded call${compared === 1 ? "" : "s"}, ${agreed} agreed, ${differed} differed${failed}`,
    );
  }
  for (const reason of r.reasons) lines.push(...framed(`✗ [${reason.code}] `, reason.message));
  for (const warning of r.warnings) lines.push(...framed("! ", warning));
  return lines.map((line) => printable(line));
}

/** `mark` then the message's first line; its further lines (a list of problems) indented under it. */
function framed(mark: string, message: string): string[] {
  const [first, ...rest] = message.split("\n");
  return [`${mark}${first ?? ""}`, ...rest.map((line) => `  ${line}`)];
}
