import { type ApprovalDecisions, decisionsProblem, type PausedRun, type Tool } from "../agent/index.js";
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
}
