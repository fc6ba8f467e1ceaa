import type { SandboxCost } from "../protocol/index.js";

/**
 * Sandbox hook time of one run (docs/architecture.md, "Failure is data"): a per-turn and a per-run budget beside the
 * per-call timeout. A call that would start with either spent fails `timeout` without running; a call that starts gets
 * what is left as its timeout when that is shorter than the per-call one. Each call is charged its own run time
 * in the sandbox (`SandboxCost.runMs`), never time it queued behind other tenants' calls, and a cold
 * isolate's bundle load only when the tenant's own failure caused it (`chargedMs`; docs/architecture.md,
 * "Reloads a tenant causes").
 */
export class HookBudget {
  readonly #turnMs: number;
  readonly #runMs: number;
  #turnSpent = 0;
  #runSpent = 0;

  constructor(turnMs: number, runMs: number) {
    this.#turnMs = turnMs;
    this.#runMs = runMs;
  }

  beginTurn(): void {
    this.#turnSpent = 0;
  }

  charge(ms: number): void {
    this.#turnSpent += ms;
    this.#runSpent += ms;
  }

  /** Puts back what a checkpointed run had spent. */
  restore(spent: { readonly turnMs: number; readonly runMs: number }): void {
    this.#turnSpent = spent.turnMs;
    this.#runSpent = spent.runMs;
  }

  spent(): { turnMs: number; runMs: number } {
    return { turnMs: this.#turnSpent, runMs: this.#runSpent };
  }

  /** Why a call may not start now, or undefined when it may. */
  denial(): string | undefined {
    if (this.#runSpent >= this.#runMs) {
      return `The run's hook time budget of ${this.#runMs} ms is spent (${round(this.#runSpent)} ms used); the hook was not called`;
    }
    if (this.#turnSpent >= this.#turnMs) {
      return `The turn's hook time budget of ${this.#turnMs} ms is spent (${round(this.#turnSpent)} ms used); the hook was not called`;
    }
    return undefined;
  }

  /** The timeout for the next call: `perCallMs`, or what is left of either budget when that is less. */
  timeoutFor(perCallMs: number): number | undefined {
    const left = Math.min(this.#turnMs - this.#turnSpent, this.#runMs - this.#runSpent);
    return left < perCallMs ? Math.max(1, Math.floor(left)) : undefined;
  }
}

/** The hook time budgets charge for a call: its run, plus its load when the tenant's own failure caused it. */
export function chargedMs(cost: SandboxCost): number {
  return cost.loadAfterRecycle === true ? cost.runMs + (cost.loadMs ?? 0) : cost.runMs;
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}
