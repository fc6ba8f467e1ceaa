import { type ApprovalDecisions, decisionsProblem, type PausedRun, type Tool } from "../agent/index.js";
import type { CheckpointLedger } from "../store/index.js";
import { type CheckpointBody, checkpointExpiry } from "./checkpoint.js";
import { RuntimeError } from "./errors.js";

/** Decisions answer every pending call, with the tool at hand and edited args that fit its schema. */
export function checkDecisions(paused: PausedRun, decisions: ApprovalDecisions, tools: readonly Tool[]): void {
  const problem = decisionsProblem(paused.batch.pending, decisions);
  if (problem !== undefined) throw new RuntimeError("invalid_decision", problem);
  for (const pending of paused.batch.pending) {
    const tool = tools.find((t) => t.spec.name === pending.call.name);
    if (tool === undefined) {
      throw new RuntimeError(
        "invalid_decision",
        `The pending call ${pending.callId} is to tool \`${pending.call.name}\`, which the resume was not given: pass it in \`tools\``,
      );
    }
    const decision = decisions[pending.callId];
    if (decision?.type !== "edit") continue;
    const parsed = tool.parameters.safeParse(decision.args);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new RuntimeError(
        "invalid_decision",
        `The edited args of ${pending.callId} do not fit the schema of \`${pending.call.name}\`: ${issue?.path.join(".") || "(args)"}: ${issue?.message}`,
      );
    }
  }
}

/**
 * A paused run goes on once: refused when its checkpoint expired (`checkpoint_expired`) or was resumed
 * already (`checkpoint_replayed`), by this runtime (ids kept in memory) or by any runtime on the store's
 * ledger (a unique key on the id, kept until the checkpoint expires).
 */
export class ResumeOnce {
  readonly #recent = new RecentIds(10_000);
  readonly #ledger: CheckpointLedger | undefined;

  constructor(ledger: CheckpointLedger | undefined) {
    this.#ledger = ledger;
  }

  /** Refuses a checkpoint that expired or that this runtime resumed: checked before anything is fetched. */
  check(body: CheckpointBody, now: number): void {
    const expiresAt = checkpointExpiry(body);
    if (!(now < expiresAt)) {
      throw new RuntimeError(
        "checkpoint_expired",
        `Checkpoint ${body.id} of run ${body.runId} expired at ${new Date(expiresAt).toISOString()}; start the run again (a longer \`checkpointTtlMs\` keeps paused runs longer)`,
      );
    }
    if (this.#recent.has(body.id)) throw replayed(body);
  }

  /**
   * Marks the checkpoint resumed, here and in the ledger; call once nothing else can refuse the resume (a
   * refused resume may be retried). Rejects with `checkpoint_replayed`, or the ledger's `StoreError` (the
   * resume is then refused and may be retried).
   */
  async claim(body: CheckpointBody, signal: AbortSignal): Promise<void> {
    if (!this.#recent.add(body.id)) throw replayed(body);
    if (this.#ledger === undefined) return;
    let first: boolean;
    try {
      const claim = { id: body.id, tenantId: body.tenantId, runId: body.runId, expiresAt: checkpointExpiry(body) };
      first = await this.#ledger.claim(claim, signal);
    } catch (error) {
      this.#recent.delete(body.id);
      throw error;
    }
    if (!first) throw replayed(body);
  }
}

function replayed(body: CheckpointBody): RuntimeError {
  return new RuntimeError(
    "checkpoint_replayed",
    `Checkpoint ${body.id} of run ${body.runId} was resumed already; a paused run goes on once`,
  );
}

/** Ids seen lately, oldest forgotten first. */
export class RecentIds {
  readonly #max: number;
  readonly #ids = new Set<string>();
  constructor(max: number) {
    this.#max = max;
  }
  has(id: string): boolean {
    return this.#ids.has(id);
  }

  /** False when `id` was added already. */
  add(id: string): boolean {
    if (this.#ids.has(id)) return false;
    this.#ids.add(id);
    if (this.#ids.size > this.#max) {
      const oldest = this.#ids.values().next().value;
      if (oldest !== undefined) this.#ids.delete(oldest);
    }
    return true;
  }

  delete(id: string): void {
    this.#ids.delete(id);
  }
}
