import type { Failure, HookEvent, HookPoint, HookResult } from "../protocol/index.js";
import type { DispatchOptions } from "./api.js";
import type { DecidedBy, PointDecision, StopDecision } from "./decisions.js";
import type { FailurePolicy } from "./registration.js";

/**
 * One hook point's row in the dispatch table (`RULES`): its default failure policy and its stacking rule
 * (docs/architecture.md, "Hook points, events and stacking") as a pure fold over the hooks' results in stack order. The
 * dispatcher owns the loop, the policy and the records; a rule only combines. `A` is the rule's accumulator; functions
 * return a new one and never mutate their input.
 */
export interface PointRule<P extends HookPoint, A = unknown> {
  readonly point: P;
  /** The policy a registration runs under at this point unless it asks otherwise (`DEFAULT_POLICY`). */
  readonly policy: FailurePolicy;
  start(event: HookEvent<P>): A;
  /** The event the next hook sees: the same object as long as nothing rewrote it (its JSON is reused). */
  event(acc: A): HookEvent<P>;
  /**
   * Checks a result before it is applied; a message makes it the hook's `invalid_result` failure. `options`
   * are the dispatch's (`validateArgs` re-validates a `tool.call` rewrite).
   */
  check(acc: A, result: HookResult<P>, options: DispatchOptions | undefined): string | undefined;
  apply(acc: A, result: HookResult<P>, by: DecidedBy): A;
  /** Applies the point's safe decision for a failure under a `closed` policy. */
  safe(acc: A, failure: Failure, by: DecidedBy): A;
  /** True once a first-wins decision was taken: later hooks do not run at this point. */
  done(acc: A): boolean;
  decide(acc: A): PointDecision<P>;
}

/** The shape most rules share: the effective event, whether a hook changed it, and a final decision. */
export interface Chain<P extends HookPoint, D> {
  readonly event: HookEvent<P>;
  readonly changed: boolean;
  readonly final: D | undefined;
}

export function chainStart<P extends HookPoint, D>(event: HookEvent<P>): Chain<P, D> {
  return { event, changed: false, final: undefined };
}

export function rewritten<P extends HookPoint, D>(acc: Chain<P, D>, event: HookEvent<P>): Chain<P, D> {
  return { event, changed: true, final: acc.final };
}

export function finished<P extends HookPoint, D>(acc: Chain<P, D>, final: D): Chain<P, D> {
  return { event: acc.event, changed: acc.changed, final };
}

export function stopOf(reason: string, by: DecidedBy): StopDecision {
  return { type: "stop", reason, by };
}

type ChainRule<P extends HookPoint, D> = PointRule<P, Chain<P, D>>;

/**
 * What a chain rule says of its point; `chainRule` fills the rest. `safe` may be left out where a stop is a
 * decision of the point (every point but `run.end`).
 */
export type ChainRuleParts<P extends HookPoint, D> = Pick<ChainRule<P, D>, "point" | "policy" | "apply" | "decide"> &
  Partial<Pick<ChainRule<P, D>, "check" | "done">> &
  (StopDecision extends D ? Partial<Pick<ChainRule<P, D>, "safe">> : Pick<ChainRule<P, D>, "safe">);

/**
 * A rule over a `Chain`, the shape most points share: each hook sees the effective event, results are not
 * checked beyond their schema, a final decision ends the point (first wins), and a failure under a `closed`
 * policy stops the run — unless the parts say otherwise.
 */
export function chainRule<P extends HookPoint, D>(parts: ChainRuleParts<P, D>): ChainRule<P, D> {
  return {
    start: chainStart,
    event: (acc) => acc.event,
    check: noCheck,
    // Only points whose decisions include a stop may leave `safe` out (ChainRuleParts).
    safe: (acc, failure, by) => finished(acc, stopOf(failure.code, by) as D),
    done: (acc) => acc.final !== undefined,
    ...parts,
  };
}

/** No rule but `tool.call` checks its results beyond their schema. */
export function noCheck(): undefined {
  return undefined;
}

/**
 * A rule as the table holds it: the dispatcher hands a rule's accumulator back to the same rule only, so
 * the accumulator's type is the rule's own business (an existential the type system cannot spell).
 */
export function row<P extends HookPoint, A>(rule: PointRule<P, A>): PointRule<P> {
  return rule as unknown as PointRule<P>;
}
