import { createHash } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { resolve } from "node:path";
import {
  type ApprovalDecision,
  type ApprovalDecisions,
  type LoadedScenario,
  MAX_SCENARIO_BYTES,
  ScenarioError,
  scenarioOfText,
  scriptedModel,
  type Tool,
} from "../../agent/index.js";
import { type JsonObject, JsonValue } from "../../protocol/index.js";
import {
  type Checkpoint,
  type CheckpointBody,
  type CheckpointKey,
  checkpointKeys,
  type HookRuntime,
  MIN_KEY_BYTES,
  openCheckpoint,
  parseCheckpointJson,
  type RunAgentOptions,
  type RunAgentResult,
  type RunEvent,
  RuntimeError,
} from "../../runtime/index.js";
import { clipped, line } from "../../terminal/index.js";
import { CliError, type CliIO, type ParsedArgs, stringFlag, UsageError } from "../command.js";
import { ageMs } from "../decision-options.js";
import { readOperatorFile } from "../operator-file.js";

/** The environment variable the CLI reads the checkpoint key from. */
export const CHECKPOINT_KEY_ENV = "ISOHOOK_CHECKPOINT_KEY";
/** While rotating keys: the key before it, which still opens checkpoints (never seals one). */
export const PREVIOUS_CHECKPOINT_KEY_ENV = "ISOHOOK_CHECKPOINT_PREVIOUS_KEY";

const NEW_KEY = `$(node -e "console.log(require('crypto').randomBytes(32).toString('base64'))")`;

/** How to set the key, for the errors that need one. */
export const KEY_HOW = `Set ${CHECKPOINT_KEY_ENV} to at least 16 bytes, e.g. export ${CHECKPOINT_KEY_ENV}=${NEW_KEY}`;

/** A checkpoint file is refused above this (the runtime caps a body at 32 Mi characters). */
const MAX_CHECKPOINT_FILE_BYTES = 40 * 1024 * 1024;

/** What a run seals into its checkpoint and how it answers asks. */
export interface ScenarioApproval {
  readonly key: CheckpointKey | undefined;
  /** `{scenario, sha256}`: the resume reads the same scenario again, and refuses it changed. */
  readonly meta: { readonly scenario: string; readonly sha256: string };
  /** `--checkpoint-ttl`: how long a checkpoint of this run can be resumed (default: the runtime's, 7 days). */
  readonly ttlMs: number | undefined;
}

export interface RunStart {
  readonly loaded: LoadedScenario;
  readonly resume:
    | { readonly checkpoint: Checkpoint; readonly body: CheckpointBody; readonly decisions: ApprovalDecisions }
    | undefined;
  readonly approval: ScenarioApproval;
}

/** The key from the environment: with the previous one after it while rotating (the first seals). */
function checkpointKeyOf(env: CliIO["env"]): CheckpointKey | undefined {
  const key = env[CHECKPOINT_KEY_ENV] || undefined;
  const previous = env[PREVIOUS_CHECKPOINT_KEY_ENV] || undefined;
  if (previous !== undefined && key === undefined)
    throw new UsageError(
      `${PREVIOUS_CHECKPOINT_KEY_ENV} only opens checkpoints beside the key that seals new ones: set ${CHECKPOINT_KEY_ENV} too`,
    );
  const keys: CheckpointKey | undefined = key === undefined || previous === undefined ? key : [key, previous];
  // Checked before the run starts, so a bad key cannot cost a paused run after its tools ran.
  if (keys !== undefined) {
    try {
      checkpointKeys(keys);
    } catch {
      const short = [key, previous].some((k) => k !== undefined && Buffer.byteLength(k) < MIN_KEY_BYTES);
      throw new UsageError(
        short
          ? `${CHECKPOINT_KEY_ENV} (and ${PREVIOUS_CHECKPOINT_KEY_ENV}) must be at least ${MIN_KEY_BYTES} bytes: 32 random bytes, e.g. ${NEW_KEY}`
          : `${CHECKPOINT_KEY_ENV} is not a usable checkpoint key`,
      );
    }
  }
  return keys;
}

/** Reads the flags: a fresh run from `--scenario`, or a resume from `--resume` with its decisions. */
export async function startOf(args: ParsedArgs, io: CliIO): Promise<RunStart> {
  const resumeFile = stringFlag(args, "resume");
  const decisions = decisionFlags(args);
  const key = checkpointKeyOf(io.env);
  const ttlMs = ttlFlag(args);
  if (resumeFile === undefined) {
    if (Object.keys(decisions).length > 0 || args.values.reason !== undefined)
      throw new UsageError("--approve, --reject, --edit and --reason answer a paused run: give them with --resume");
    const file = resolve(io.cwd, stringFlag(args, "scenario", true));
    const { loaded, sha256 } = await readScenario(file);
    return { loaded, resume: undefined, approval: { key, ttlMs, meta: { scenario: file, sha256 } } };
  }
  if (args.values.scenario !== undefined)
    throw new UsageError("--resume reads the scenario the paused run came from: leave out --scenario");
  if (Object.keys(decisions).length === 0)
    throw new UsageError(
      "Give a decision for each held call: --approve <callId>, --reject <callId> or --edit <callId>=<json>",
    );
  if (key === undefined)
    throw new UsageError(`Set ${CHECKPOINT_KEY_ENV} to the key the paused run was checkpointed with`);
  const checkpoint = await readCheckpointFile(io.cwd, resumeFile);
  const body = refusal(() => openCheckpoint(checkpoint, key));
  const meta = scenarioMeta(body.meta);
  const { loaded, sha256 } = await readScenario(meta.scenario).catch((error: unknown) => {
    if (!(error instanceof CliError) || error.code !== "file_not_found") throw error;
    throw new CliError(
      `The paused run's scenario ${meta.scenario} cannot be read: put it back to resume`,
      "scenario_changed",
    );
  });
  if (sha256 !== meta.sha256) {
    throw new CliError(
      `The paused run's scenario ${meta.scenario} changed since the run paused; a run resumes only with the scenario it started with`,
      "scenario_changed",
    );
  }
  // openCheckpoint checked its shape and MAC.
  return { loaded, resume: { checkpoint: checkpoint as Checkpoint, body, decisions }, approval: { key, ttlMs, meta } };
}

/** The run options that seal a checkpoint and answer asks from the scenario's `approvals`. */
export function approvalOptions(
  loaded: LoadedScenario,
  approval: ScenarioApproval | undefined,
): Pick<RunAgentOptions, "checkpointKey" | "checkpointMeta" | "checkpointTtlMs" | "approve"> {
  const answers = loaded.scenario.approvals;
  const approve =
    answers === undefined
      ? undefined
      : (pending: readonly { readonly callId: string }[]) =>
          pending.every((p) => Object.hasOwn(answers, p.callId))
            ? Object.fromEntries(pending.map((p) => [p.callId, answers[p.callId] as ApprovalDecision]))
            : undefined;
  return {
    ...(approval?.key !== undefined ? { checkpointKey: approval.key } : {}),
    ...(approval !== undefined ? { checkpointMeta: approval.meta } : {}),
    ...(approval?.ttlMs !== undefined ? { checkpointTtlMs: approval.ttlMs } : {}),
    ...(approve !== undefined ? { approve } : {}),
  };
}

/** Continues a paused scenario run: the scripted model from where it was, the held calls decided. */
export function resumeScenario(
  runtime: HookRuntime,
  loaded: LoadedScenario,
  tools: readonly Tool[],
  io: Pick<CliIO, "signal">,
  onEvent: (event: RunEvent) => void,
  resume: NonNullable<RunStart["resume"]>,
  approval: ScenarioApproval,
): Promise<RunAgentResult> {
  const { scenario } = loaded;
  const start = resume.body.loop.modelCalls;
  return runtime.resumeAgent(resume.checkpoint, {
    tenantId: scenario.tenant,
    decisions: resume.decisions,
    tools,
    model: scriptedModel(scenario.model.turns, { ...(scenario.model.id ? { id: scenario.model.id } : {}), start }),
    ...(io.signal ? { signal: io.signal } : {}),
    ...approvalOptions(loaded, approval),
    onEvent,
  });
}

/** Runs a runtime call; its errors as the CLI reports them (a missing key is a usage error). */
export async function runtimeCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (!(error instanceof RuntimeError)) throw error;
    if (error.code === "no_checkpoint_key") {
      throw new UsageError(
        `A hook asked for approval and ${CHECKPOINT_KEY_ENV} is not set, so the paused run cannot be checkpointed; the run stopped at the ask, and no tool ran after it. ${KEY_HOW}, then run it again (or answer the calls in the scenario's \`approvals\`)`,
      );
    }
    if (error.code === "invalid_options" && /checkpointKey/.test(error.message))
      throw new UsageError(`${CHECKPOINT_KEY_ENV}: ${error.message}`);
    throw new CliError(error.message, error.code);
  }
}

/**
 * Prints the held calls (tenant text through printable) and writes the checkpoint: to `--checkpoint`, or in
 * text mode to `<runId>.checkpoint.json` in the working directory (characters other than letters, digits,
 * `_` and `-` in the run id as `_`) (with `--json` it is in the result line).
 */
export async function reportPaused(result: RunAgentResult, args: ParsedArgs, io: CliIO): Promise<void> {
  const { checkpoint } = result;
  if (checkpoint === undefined) return;
  // A run id may hold any printable character: the default file name keeps it from naming another folder.
  const named = () => `${result.runId.replace(/[^A-Za-z0-9_-]/g, "_")}.checkpoint.json`;
  const file = stringFlag(args, "checkpoint") ?? (args.json ? undefined : named());
  if (file !== undefined) await writeFile(resolve(io.cwd, file), `${JSON.stringify(checkpoint)}\n`, { mode: 0o600 });
  if (args.json || file === undefined) return;
  const pending = result.pending ?? [];
  io.stdout(line`  waiting for approval:\n`);
  for (const p of pending) {
    const args = JSON.stringify(p.args);
    io.stdout(line`    ${p.callId}  ${p.call.name}(${clipped(args, 72)})\n`);
    io.stdout(line`      asked by ${p.by.hookId}: “${p.reason}”\n`);
    if (p.question !== undefined) io.stdout(line`      ${p.question}\n`);
  }
  const ids = pending.map((p) => `--approve ${p.callId}`).join(" ");
  io.stdout(line`  checkpoint: ${file} — continue with: isohook run --resume ${file} ${ids} (or --reject, --edit)\n`);
}

/** `--checkpoint-ttl <age>` (90s, 30m, 12h, 7d): from a second to a year. */
function ttlFlag(args: ParsedArgs): number | undefined {
  const raw = stringFlag(args, "checkpoint-ttl");
  if (raw === undefined) return undefined;
  const ms = ageMs(raw);
  if (ms === undefined || ms < 1_000 || ms > 365 * 86_400_000)
    throw new UsageError(`Expected --checkpoint-ttl to be an age from 1s to 365d (90s, 30m, 12h, 7d), got \`${raw}\``);
  return ms;
}

/** `--approve`, `--reject` (with `--reason`) and `--edit id=json` as decisions; one per call id. */
function decisionFlags(args: ParsedArgs): Record<string, ApprovalDecision> {
  const decisions: Record<string, ApprovalDecision> = {};
  const add = (id: string, decision: ApprovalDecision) => {
    if (id === "") throw new UsageError("Expected a call id, got an empty string");
    if (Object.hasOwn(decisions, id)) throw new UsageError(`Call ${id} was given more than one decision: give it one`);
    decisions[id] = decision;
  };
  const list = (name: string) => {
    const value = args.values[name];
    return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
  };
  const reason = stringFlag(args, "reason") ?? "rejected by the operator";
  if (args.values.reason !== undefined && list("reject").length === 0)
    throw new UsageError("--reason goes with --reject");
  for (const id of list("approve")) add(id, { type: "approve" });
  for (const id of list("reject")) add(id, { type: "reject", reason });
  for (const spec of list("edit")) {
    const at = spec.indexOf("=");
    if (at <= 0) throw new UsageError(`Expected --edit <callId>=<json arguments>, got \`${spec}\``);
    let parsed: unknown;
    try {
      parsed = JSON.parse(spec.slice(at + 1));
    } catch {
      throw new UsageError(`The arguments of --edit ${spec.slice(0, at)} are not JSON`);
    }
    const object = JsonValue.safeParse(parsed);
    if (!object.success || typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
      throw new UsageError(`The arguments of --edit ${spec.slice(0, at)} must be a JSON object`);
    add(spec.slice(0, at), { type: "edit", args: parsed as JsonObject });
  }
  return decisions;
}

/**
 * A checkpoint file read by the operator-file reader: the checkpoint, or what `run --json` printed (all of
 * it, or its result line; the last result line holds the checkpoint). Each JSON text is parsed only once its
 * nesting and size are found bounded: it comes back from clients.
 */
async function readCheckpointFile(cwd: string, file: string): Promise<unknown> {
  const text = await readOperatorFile(cwd, file, "the checkpoint", MAX_CHECKPOINT_FILE_BYTES);
  const resultOf = (value: unknown): unknown => {
    const line = value as { type?: unknown; checkpoint?: unknown } | null;
    return line?.type === "result" && line.checkpoint !== undefined ? line.checkpoint : undefined;
  };
  try {
    const value = refusal(() => parseCheckpointJson(text, file));
    return resultOf(value) ?? value;
  } catch (whole) {
    // What `run --json` printed: one JSON value a line, the result line last.
    for (const json of text.trimEnd().split("\n").reverse()) {
      try {
        const checkpoint = resultOf(refusal(() => parseCheckpointJson(json, file)));
        if (checkpoint !== undefined) return checkpoint;
      } catch {
        // Not the result line.
      }
    }
    throw whole;
  }
}

function refusal<T>(fn: () => T): T {
  try {
    return fn();
  } catch (error) {
    if (error instanceof RuntimeError) throw new CliError(error.message, error.code);
    throw error;
  }
}

function scenarioMeta(meta: unknown): ScenarioApproval["meta"] {
  const m = meta as { scenario?: unknown; sha256?: unknown } | null;
  if (typeof m?.scenario !== "string" || typeof m.sha256 !== "string") {
    throw new CliError(
      "This checkpoint was not made by `isohook run` (it names no scenario); resume it with the host that made it",
      "invalid_checkpoint",
    );
  }
  return { scenario: m.scenario, sha256: m.sha256 };
}

export async function scenarioOf(file: string): Promise<LoadedScenario> {
  return (await readScenario(file)).loaded;
}

/** A scenario file read once by the operator-file reader: the scenario, and the SHA-256 a resume checks. */
async function readScenario(file: string): Promise<{ loaded: LoadedScenario; sha256: string }> {
  const text = await readOperatorFile("/", file, "the scenario", MAX_SCENARIO_BYTES);
  try {
    return { loaded: scenarioOfText(text, file), sha256: createHash("sha256").update(text).digest("hex") };
  } catch (error) {
    if (error instanceof ScenarioError) throw new CliError(error.message, error.code);
    throw error;
  }
}
