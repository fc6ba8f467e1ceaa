import type { Failure, HookPoint } from "../protocol/index.js";
import type { InvokedHook } from "./invoke-hook.js";
import { type SourceMapIndex, withSourceStack } from "./stack-map.js";

/**
 * A tenant hook's run-scoped `ctx.state`, kept as the JSON it crosses as, and what a call's outcome does to
 * it. One per deciding hook, one per observer (their states are apart).
 */
export class HookState {
  json = "{}";

  /**
   * The outcome to hand on: a failure keeps the state and has its stack mapped to the author's files; a
   * decision with `state` replaces it, unless the new state is over `maxStateChars`, which fails the call.
   */
  settle<P extends HookPoint>(
    invoked: InvokedHook<P>,
    sourceMap: SourceMapIndex | undefined,
    maxStateChars: number,
  ): InvokedHook<P> {
    const { outcome, cost } = invoked;
    if (outcome.type === "failed") {
      return {
        outcome: { type: "failed", failure: withSourceStack(outcome.failure, sourceMap), logs: outcome.logs },
        cost,
      };
    }
    if (outcome.state !== undefined) {
      const stateJson = JSON.stringify(outcome.state);
      if (stateJson.length > maxStateChars) {
        const failure = stateTooLarge(stateJson.length, maxStateChars);
        return { outcome: { type: "failed", failure, logs: outcome.logs }, cost };
      }
      this.json = stateJson;
    }
    return invoked;
  }
}

function stateTooLarge(chars: number, max: number): Failure {
  return {
    code: "result_too_large",
    message: `The hook's state is ${chars} characters, over the ${max} limit; its result and state were discarded (keep less in ctx.state)`,
  };
}
