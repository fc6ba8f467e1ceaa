import { dirname, resolve } from "node:path";
import { z } from "zod";
import { HookFileError, readOperatorFile } from "../bundler/index.js";
import { JsonValue, Limits, Message, TenantId } from "../protocol/index.js";
import { ApprovalDecision } from "./approval.js";
import type { RunInbox } from "./inbox.js";
import { ToolDeclaration } from "./scenario-tool.js";
import { ScriptedTurn } from "./scripted-model.js";

/**
 * A reproducible agent session: which tenant, which hooks, which tools, what the (scripted) model says and
 * what the user asks. `isohook run --scenario <file>` and the demo run these.
 *
 * ```json
 * {
 *   "tenant": "acme",
 *   "hook": "../hooks/block-destructive-shell",
 *   "tools": [{ "name": "shell", "parameters": { "type": "object", "properties": { "command": { "type": "string" } } } }],
 *   "model": { "turns": [{ "toolCalls": [{ "name": "shell", "args": { "command": "rm -rf /" } }] }, { "text": "Done." }] },
 *   "input": "Clean up the disk"
 * }
 * ```
 */
export const Scenario = z.strictObject({
  $schema: z.string().optional(),
  name: z.string().max(200).optional(),
  description: z.string().max(2_000).optional(),
  tenant: TenantId,
  /** The tenant's hook entry (a folder with index.ts, or a file), relative to the scenario file. Without it the store's active bundle runs. */
  hook: z.string().min(1).optional(),
  /**
   * The hook folder `hook` may draw files from, relative to the scenario file: needed only when the hook
   * shares code with sibling folders inside it. Default: the hook's own folder.
   */
  root: z.string().min(1).optional(),
  /** `ctx.config` for the hook entry's bundle. */
  config: JsonValue.optional(),
  /** Version number reported for the hook entry's bundle (a store bundle has its own). */
  version: z.number().int().nonnegative().optional(),
  system: z.string().optional(),
  input: z.union([z.string(), z.array(Message).min(1)]),
  /** Messages delivered (through `input.inbound`, source `followUp`) when the run would otherwise end. */
  followUp: z.array(z.string()).default([]),
  /**
   * Messages from outside the run (another agent, a supervisor), each delivered before turn `turn` through
   * `input.inbound` with its `source` (default `peer`) and sender `from`.
   */
  peers: z
    .array(
      z.strictObject({
        turn: z.number().int().min(1),
        source: z.enum(["peer", "steering"]).default("peer"),
        from: z.string().min(1).max(128).optional(),
        content: z.string(),
      }),
    )
    .default([]),
  tools: z.array(ToolDeclaration).default([]),
  model: z.strictObject({ id: z.string().min(1).optional(), turns: z.array(ScriptedTurn).min(1) }),
  maxTurns: z.number().int().min(1).max(1_000).default(20),
  parallelToolCalls: z.boolean().default(false),
  /** Sandbox limits for this session's executor (docs/architecture.md, "Limits"); unset ones keep their defaults. */
  limits: Limits.optional(),
  /**
   * Answers to asks, by call id (scripted calls are `call_<turn>_<index>` unless named), the way a human
   * would: when every pending call has one, the run goes on; otherwise it ends with stop reason `approval`.
   */
  approvals: z.record(z.string().min(1), ApprovalDecision).optional(),
  /** Hook time per turn and per run in ms (docs/architecture.md, "Limits": 250 / 5000). */
  budgets: z
    .strictObject({
      turnMs: z.number().int().min(1).optional(),
      runMs: z.number().int().min(1).optional(),
    })
    .optional(),
});
export type Scenario = z.infer<typeof Scenario>;
export type ScenarioInput = z.input<typeof Scenario>;

/** The scenario's `peers` as a run's inbox: each message is delivered before its turn. */
export function scenarioInbox(scenario: Scenario): RunInbox {
  return {
    drain: (turn) =>
      scenario.peers
        .filter((peer) => peer.turn === turn)
        .map(({ source, from, content }) => ({ source, from, message: { role: "user", content } })),
  };
}

/** A scenario file that cannot be read or does not match the schema; the message names the field. */
export class ScenarioError extends Error {
  readonly code = "invalid_scenario";
  constructor(message: string) {
    super(message);
    this.name = "ScenarioError";
  }
}

/** A parsed scenario and the folder its relative paths resolve against. */
export interface LoadedScenario {
  readonly scenario: Scenario;
  readonly file: string;
  /** `hook` resolved against the scenario's folder. */
  readonly hookEntry: string | undefined;
  /** `root` resolved against the scenario's folder. */
  readonly hookRoot: string | undefined;
}

/** Largest scenario file read (16 MiB). */
export const MAX_SCENARIO_BYTES = 16 * 1024 * 1024;

/**
 * Reads and validates a scenario file; throws `ScenarioError` naming the file and the field. The file is
 * read by the one operator-file reader: a FIFO, a device, a directory or a file over `MAX_SCENARIO_BYTES`
 * is refused before a byte is read.
 */
export async function loadScenario(file: string, signal?: AbortSignal): Promise<LoadedScenario> {
  let text: string;
  try {
    text = await readOperatorFile(file, { shown: file, what: "the scenario", maxBytes: MAX_SCENARIO_BYTES });
  } catch (error) {
    if (error instanceof HookFileError) throw new ScenarioError(error.message);
    throw error;
  }
  signal?.throwIfAborted();
  return scenarioOfText(text, file);
}

/** A scenario from the text of `file` (read by the caller); throws `ScenarioError` naming the file and the field. */
export function scenarioOfText(text: string, file: string): LoadedScenario {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ScenarioError(`${file} is not JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  const scenario = parseScenario(json, file);
  return {
    scenario,
    file,
    hookEntry: scenario.hook === undefined ? undefined : resolve(dirname(file), scenario.hook),
    hookRoot: scenario.root === undefined ? undefined : resolve(dirname(file), scenario.root),
  };
}

/** Validates a scenario value; `where` prefixes the messages (a file name). */
export function parseScenario(value: unknown, where = "scenario"): Scenario {
  const parsed = Scenario.safeParse(value);
  if (parsed.success) return parsed.data;
  const lines = parsed.error.issues.slice(0, 5).map((issue) => `  \`${fieldPath(issue.path)}\`: ${issue.message}`);
  const more = parsed.error.issues.length > 5 ? `\n  … and ${parsed.error.issues.length - 5} more` : "";
  throw new ScenarioError(`${where} is not a valid scenario:\n${lines.join("\n")}${more}`);
}

function fieldPath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return "(the whole file)";
  let out = "";
  for (const key of path) out += typeof key === "number" ? `[${key}]` : out === "" ? String(key) : `.${String(key)}`;
  return out;
}
