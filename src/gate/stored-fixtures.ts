import { z } from "zod";
import { HOOK_POINT_NAMES, type HookPoint, JsonValue } from "../protocol/index.js";
import type { FixtureEvent } from "./gate-report.js";

const Stored = z.looseObject({
  fixtures: z
    .looseObject({
      file: z.string(),
      events: z
        .array(
          z.strictObject({
            line: z.number().int().positive(),
            point: z.enum(HOOK_POINT_NAMES as [HookPoint, ...HookPoint[]]),
            event: JsonValue,
          }),
        )
        .optional(),
    })
    .nullable(),
});

/**
 * The fixture events a stored gate report kept (see `FixtureSummary.events`), with the fixtures file they
 * came from; none for a report without them (older reports, none recorded, or one that does not parse).
 */
export function storedFixtureEvents(report: unknown): { file: string; events: FixtureEvent[] } {
  const parsed = Stored.safeParse(report);
  if (!parsed.success || parsed.data.fixtures === null) return { file: "", events: [] };
  return { file: parsed.data.fixtures.file, events: parsed.data.fixtures.events ?? [] };
}
