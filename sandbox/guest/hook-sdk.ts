/**
 * The hook SDK: what a hook author imports as `isohook/hook-sdk`.
 *
 * ```ts
 * import { defineHooks } from "isohook/hook-sdk";
 *
 * export default defineHooks({
 *   toolCall(event) {
 *     if (event.call.name === "shell" && String(event.call.args.command).includes("rm -rf")) {
 *       return { type: "block", reason: "destructive shell command" };
 *     }
 *   },
 * });
 * ```
 *
 * Handler keys are the camelCase of the hook point (`tool.call` → `toolCall`). Each handler receives
 * `(event, ctx)`, may be async, and returns a result for its point or nothing (the no-op). Hooks run in a
 * V8 isolate with no Node, no timers and no I/O; module-level variables do not survive (an isolate may be
 * recreated at any time): keep run-scoped data in `ctx.state`.
 *
 * This file has no run-time imports: it is bundled into every hook and must run inside the isolate.
 */
import type { z } from "zod";
import type { HookContext as HookContextSchema } from "../../src/protocol/context.js";
import type { HOOK_POINTS, HookEvent, HookPoint } from "../../src/protocol/hook-points.js";

declare global {
  /**
   * The isolate's console (hooks have no Node types): each call is one line of the call's `logs`, capped by
   * the sandbox limits; nothing reaches a terminal directly. Merges with Node's or the DOM's `Console`.
   */
  interface Console {
    log(...data: unknown[]): void;
    info(...data: unknown[]): void;
    debug(...data: unknown[]): void;
    warn(...data: unknown[]): void;
    error(...data: unknown[]): void;
  }
  var console: Console;
}

type Points = typeof HOOK_POINTS;
type HandlerKey<P extends HookPoint> = Points[P]["handler"];

/** What a handler of point P may return: a result of that point, or nothing. */
// biome-ignore lint/suspicious/noConfusingVoidType: a handler that falls off its end returns void.
export type HookReturn<P extends HookPoint> = z.input<Points[P]["result"]> | undefined | void;

/** The `ctx` a handler receives. Ids are plain strings inside the sandbox. */
export type HookContext = z.input<typeof HookContextSchema>;

export type Handler<P extends HookPoint> = (
  event: HookEvent<P>,
  ctx: HookContext,
) => HookReturn<P> | Promise<HookReturn<P>>;

/** A hook module's default export: any subset of the handlers. */
export type Hooks = { [P in HookPoint as HandlerKey<P>]?: Handler<P> };

export type { HookEvent, HookPoint };

/** Identity at run time; exists so a hook module gets autocomplete and type errors for wrong results. */
export function defineHooks(hooks: Hooks): Hooks {
  return hooks;
}
