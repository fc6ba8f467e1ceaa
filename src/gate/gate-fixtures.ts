import { HookFileError, type ResolvedEntry } from "../bundler/index.js";
import { type Fixture, FixtureError, type FixtureReport, readFixtures } from "../fixture-runner/index.js";
import { fuzzDictionary } from "../fuzz/index.js";
import { failureText } from "../protocol/index.js";
import { printable } from "../terminal/index.js";
import type { FixtureEvent, FixtureSummary, GateReason } from "./gate-report.js";

/** The deploy gate's fixtures stage: read the hook's fixtures.jsonl, run it, and keep its events for fuzzing. */

/** How much fixture JSON a gate report keeps for later fuzzing of the stored version. */
const KEPT_EVENT_CHARS = 256 * 1024;

export const FIXTURES_FILE = "fixtures.jsonl";

/** What the fixtures give the fuzz stage: strings to seed it with, and the points they cover. */
export interface Dictionary {
  strings: string[];
  readonly points: Set<string>;
}

/**
 * The hook's fixtures; or, after pushing the reason, undefined when they are missing or wrong (the gate
 * goes on, to list every reason) or "refused" when the file may not be read at all (the gate stops).
 */
export async function loadFixtures(
  file: string,
  shownFile: string,
  hook: ResolvedEntry,
  reasons: GateReason[],
): Promise<Fixture[] | undefined | "refused"> {
  try {
    const fixtures = await readFixtures(file, { shown: shownFile, folder: hook.folder });
    if (fixtures.length > 0) return fixtures;
    reasons.push({
      code: "no_fixtures",
      message: `${shownFile} has no fixtures: add at least one case per exported hook point.`,
      file: shownFile,
    });
  } catch (error) {
    if (error instanceof HookFileError && error.code === "file_not_found") {
      reasons.push({
        code: "no_fixtures",
        message: `No ${shownFile}: add one JSON line per case ({"point", "event", "expect"}).`,
        file: shownFile,
      });
    } else if (error instanceof HookFileError) {
      reasons.push({ code: "invalid_fixtures", message: error.message, file: shownFile });
      return "refused";
    } else if (error instanceof FixtureError) {
      reasons.push({ code: "invalid_fixtures", message: error.message, file: shownFile });
    } else {
      throw error;
    }
  }
  return undefined;
}

export async function checkFixtures(
  fixtures: Fixture[] | undefined,
  shownFile: string,
  reasons: GateReason[],
  run: (fixtures: Fixture[]) => Promise<FixtureReport[]>,
): Promise<{ summary: FixtureSummary | null; dictionary: Dictionary }> {
  const dictionary: Dictionary = { strings: [], points: new Set() };
  if (fixtures === undefined) return { summary: null, dictionary };
  for (const fixture of fixtures) dictionary.points.add(fixture.point);
  dictionary.strings = fuzzDictionary(fixtures.map((f) => f.event));
  const results = await run(fixtures);
  let passed = 0;
  for (const result of results) {
    const failedWithoutExpectation = result.passed === undefined && result.outcome.type === "failed";
    if (result.passed === true || (result.passed === undefined && !failedWithoutExpectation)) {
      passed++;
      continue;
    }
    const why =
      result.mismatch ?? (result.outcome.type === "failed" ? failureText(result.outcome.failure) : "no match");
    reasons.push({
      code: "fixture_failed",
      message: printable(`${shownFile}:${result.line} (${result.point}): ${why}`),
      line: result.line,
      point: result.point,
    });
  }
  const summary = { file: shownFile, total: results.length, passed, failed: results.length - passed };
  return { summary: { ...summary, events: keptEvents(fixtures) }, dictionary };
}

/** Fixture events kept in the report, in file order, while their JSON stays under 256 KB. */
function keptEvents(fixtures: readonly Fixture[]): FixtureEvent[] {
  const kept: FixtureEvent[] = [];
  let chars = 0;
  for (const { line, point, event } of fixtures) {
    chars += JSON.stringify(event).length;
    if (chars > KEPT_EVENT_CHARS) break;
    kept.push({ line, point, event });
  }
  return kept;
}
