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
 * At `toolCall`, `toolResult` and `toolInvalid` a handler may name the tools it cares about:
 * `toolCall: { tools: ["shell", "git_*"], handler(event, ctx) { … } }`. Globs on the tool name: `*` any run of
 * characters, `?` one character, the rest literal (letters, digits, `_ . -`); 1–64 globs of 1–128
 * characters. They are read once, when the bundle is uploaded: the runtime calls the handler only for a
 * tool they match and never enters the sandbox for the others. A plain function matches every tool.
 *
 * `observe: { toolResult(event, ctx) { … }, runEnd(…) { … } }` holds observe-only handlers (any point, the
 * same two forms): they run after the point decided, off the run's path, their return value ignored; their
 * `ctx.state` is their own (run-scoped, handed from one observe call to the next), not the deciding
 * handlers'.
 *
 * This file has no run-time imports: it is bundled into every hook and must run inside the isolate.
 */
import type { z } from "zod";
import type { HookContext as HookContextSchema } from "../../src/protocol/context.js";
import type { HOOK_POINTS, HookEvent, HookPoint } from "../../src/protocol/hook-points.js";
import type { ToolPoint } from "../../src/protocol/tool-matchers.js";

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

/** A handler that names its tools: called only for a tool whose name matches one of the globs. */
export interface Matched<H> {
  /** Tool-name globs (`*` any run, `?` one character), 1–64 of 1–128 characters; read once, at upload. */
  readonly tools: readonly string[];
  readonly handler: H;
}

/** At a tool point, a handler or `{ tools, handler }`; elsewhere a handler. */
export type HandlerOf<P extends HookPoint, H> = P extends ToolPoint ? H | Matched<H> : H;

/** An observe-only handler: anything it returns is ignored. */
export type ObserveHandler<P extends HookPoint> = (event: HookEvent<P>, ctx: HookContext) => unknown;

/** A hook module's default export: any subset of the handlers, and observe-only handlers under `observe`. */
export type Hooks = { [P in HookPoint as HandlerKey<P>]?: HandlerOf<P, Handler<P>> } & {
  readonly observe?: { [P in HookPoint as HandlerKey<P>]?: HandlerOf<P, ObserveHandler<P>> };
};

export type { HookEvent, HookPoint, ToolPoint };

/**
 * Identity at run time; exists so a hook module gets autocomplete and type errors for wrong results and
 * unknown keys. Returns the hooks as written (a composing module calls `other.toolCall(event, ctx)`).
 */
export function defineHooks<const H extends Hooks>(
  hooks: H & Record<Exclude<keyof H, keyof Hooks>, never>,
): DefinedHooks<H> {
  return hooks as DefinedHooks<H>;
}

type PointOf<K> = { [P in HookPoint]: HandlerKey<P> extends K ? P : never }[HookPoint];

/** What `defineHooks` returns: the hooks as written, a function handler typed as the point's full `Handler`. */
export type DefinedHooks<H> = {
  [K in keyof H]: H[K] extends (...args: never[]) => unknown ? Handler<PointOf<K>> : H[K];
};
