import { join, relative } from "node:path";
import { HookFileError, type ResolvedEntry } from "../../bundler/index.js";
import type { HandlerManifest } from "../../dispatch/index.js";
import { FixtureError, readFixtures } from "../../fixture-runner/index.js";
import type { SeedEvent } from "../../fuzz/index.js";
import { storedFixtureEvents } from "../../gate/index.js";
import type { HookPoint, JsonValue, SandboxBundle, TenantId } from "../../protocol/index.js";
import type { BundleStore } from "../../store/index.js";
import { CliError, type CliIO } from "../command.js";

/** One bundle ready to fuzz. */
export interface Subject {
  readonly label: string;
  readonly tenantId: TenantId;
  readonly version?: number;
  readonly bundle: SandboxBundle;
  /** Its points and tool matchers: the fuzz sends a handler only the events production would. */
  readonly manifest: HandlerManifest;
  readonly config: JsonValue;
  readonly exported: readonly HookPoint[];
  readonly seeds: readonly SeedEvent[];
  /** The command line that replays this fuzz, without --seed and --points. */
  readonly replay: string;
}

/**
 * The hook's fixtures.jsonl events, if it has one (none is fine: the fuzz then generates only), read as
 * every file of a tenant's folder is: a regular file inside it, size- and line-capped.
 */
export async function fixtureSeeds(hook: ResolvedEntry, cwd: string): Promise<SeedEvent[]> {
  const file = join(hook.dir, "fixtures.jsonl");
  const shown = relative(cwd, file) || file;
  try {
    const fixtures = await readFixtures(file, { shown, folder: hook.folder });
    return fixtures.map((f) => ({ point: f.point, event: f.event, origin: `${shown}:${f.line}` }));
  } catch (error) {
    if (error instanceof HookFileError && error.code === "file_not_found") return [];
    if (error instanceof HookFileError || error instanceof FixtureError) throw new CliError(error.message, error.code);
    throw error;
  }
}

/** A stored version (the active one without `version`), with its config and its gate report's fixture events; undefined when the tenant has no active version. */
export async function storedSubject(
  store: BundleStore,
  tenantId: TenantId,
  version: number | undefined,
  io: CliIO,
): Promise<Subject | undefined> {
  const detail = await store.version(tenantId, version, io.signal);
  if (detail === undefined) {
    if (version === undefined) return undefined;
    throw new CliError(
      `Tenant \`${tenantId}\` has no version ${version}. See \`isohook versions --tenant ${tenantId}\`.`,
      "not_found",
    );
  }
  const stored = await store.bundle(detail.hash, io.signal);
  if (stored === undefined)
    throw new CliError(`The store has no bundle ${detail.hash} for ${tenantId} v${detail.version}.`, "not_found");
  return {
    label: `${tenantId} v${detail.version}`,
    tenantId,
    version: detail.version,
    bundle: { hash: stored.hash, code: stored.code },
    manifest: detail.manifest,
    config: detail.config,
    exported: detail.hookPoints,
    seeds: storedSeeds(detail.gateReport),
    replay: `isohook fuzz --tenant ${tenantId} --version ${detail.version}`,
  };
}

/** The fixture events the version's gate report kept: a stored bundle's folder (and fixtures.jsonl) is gone. */
function storedSeeds(gateReport: JsonValue | null): SeedEvent[] {
  const { file, events } = storedFixtureEvents(gateReport);
  return events.map((e) => ({ point: e.point, event: e.event, origin: `${file}:${e.line} (gate report)` }));
}
