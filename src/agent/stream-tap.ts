import type { Dispatched, StopDecision } from "../dispatch/index.js";
import { type HookEvent, MAX_NAME_CHARS, MAX_TEXT_CHARS } from "../protocol/index.js";
import type { ModelDelta, StreamKind } from "./model.js";

/**
 * How streamed output is coalesced before it crosses into the sandbox: a window closes after `windowMs`
 * milliseconds or `windowChars` characters, whichever comes first, and at every change of kind or tool
 * call (so each tool call's arguments end in a window of their own). With `hold`, the run releases each
 * delta to `onEvent` only once `model.stream` hooks have seen its window and let it pass, so text a hook
 * stops on never reaches the user (at the cost of up to one window of delay).
 */
export interface StreamWindow {
  readonly windowMs: number;
  readonly windowChars: number;
  readonly hold: boolean;
}

/**
 * 100 ms or 400 characters (about 100 tokens): a 1,000-token reply costs about ten windows at most rates.
 * No hold: deltas reach `onEvent` as they arrive.
 */
export const DEFAULT_STREAM_WINDOW: StreamWindow = Object.freeze({ windowMs: 100, windowChars: 400, hold: false });

/** `DEFAULT_STREAM_WINDOW` with `options` over it; a bad value throws a `RangeError` that names it. */
export function streamWindowOf(options: Partial<StreamWindow> | undefined): StreamWindow {
  const window = { ...DEFAULT_STREAM_WINDOW, ...options };
  if (typeof window.hold !== "boolean")
    throw new RangeError(`Expected \`streamWindow.hold\` to be true or false, got \`${String(window.hold)}\``);
  for (const name of ["windowMs", "windowChars"] as const) {
    const value = window[name];
    if (!Number.isInteger(value) || value < 1)
      throw new RangeError(`Expected \`streamWindow.${name}\` to be an integer from 1 and up, got \`${value}\``);
  }
  return window;
}

type Window = HookEvent<"model.stream">;

/** Where one model call's windows go: its turn and the `model.stream` dispatch of its run. */
export interface StreamSink {
  readonly turn: number;
  dispatch(window: Window): Promise<Pick<Dispatched<"model.stream">, "decision">>;
}

/**
 * Feeds one model call's deltas to `model.stream` without ever making the stream wait: `push` only
 * appends. At most one dispatch is in flight; windows that close meanwhile wait, and consecutive ones of the
 * same kind and call merge, so a slow hook costs fewer crossings, never a slower stream. The first `stop`
 * aborts `controller` (the provider request) and is what `settle` returns. `onSeen(n)` says the hooks let
 * the first `n` non-empty deltas pushed pass (for `hold`).
 */
export class StreamTap {
  readonly #sink: StreamSink;
  readonly #window: StreamWindow;
  readonly #controller: AbortController;
  readonly #aggregated = new Map<string, string>();
  readonly #onSeen: ((count: number) => void) | undefined;
  #open: { window: Window; key: string; upTo: number } | undefined;
  #timer: NodeJS.Timeout | undefined;
  #waiting: { window: Window; key: string; upTo: number }[] = [];
  #pushed = 0;
  #inFlight: Promise<void> | undefined;
  #stop: StopDecision | undefined;
  #error: unknown;
  /** Dispatches made so far (what the cost figures count). */
  crossings = 0;

  constructor(sink: StreamSink, window: StreamWindow, controller: AbortController, onSeen?: (count: number) => void) {
    this.#sink = sink;
    this.#onSeen = onSeen;
    this.#window = window;
    this.#controller = controller;
  }

  push(delta: ModelDelta): void {
    if (this.#stop !== undefined || delta.delta === "") return;
    this.#pushed += 1;
    const key = delta.callId === undefined ? delta.kind : `${delta.kind}:${delta.callId}`;
    if (this.#open !== undefined && this.#open.key !== key) this.#close();
    const aggregated = (this.#aggregated.get(key) ?? "") + delta.delta;
    this.#aggregated.set(key, aggregated);
    const open = this.#open;
    if (open === undefined) {
      this.#open = {
        window: windowOf(this.#sink.turn, delta.kind, delta.delta, aggregated, delta.callId),
        key,
        upTo: this.#pushed,
      };
      this.#timer = setTimeout(() => this.#close(), this.#window.windowMs);
      this.#timer.unref();
    } else {
      open.window = { ...open.window, delta: open.window.delta + delta.delta, aggregated };
      open.upTo = this.#pushed;
    }
    if ((this.#open?.window.delta.length ?? 0) >= this.#window.windowChars) this.#close();
  }

  /** Closes the open window and waits until every window was dispatched: the stop, if a hook stopped the run. */
  async settle(): Promise<StopDecision | undefined> {
    this.#close();
    while (this.#inFlight !== undefined) await this.#inFlight;
    if (this.#error !== undefined) throw this.#error;
    return this.#stop;
  }

  /** Drops whatever has not crossed yet (the model call failed or was aborted). */
  dispose(): void {
    clearTimeout(this.#timer);
    this.#open = undefined;
    this.#waiting = [];
  }

  #close(): void {
    clearTimeout(this.#timer);
    const open = this.#open;
    this.#open = undefined;
    if (open === undefined || this.#stop !== undefined) return;
    const last = this.#waiting.at(-1);
    if (last !== undefined && last.key === open.key) {
      last.window = { ...open.window, delta: last.window.delta + open.window.delta };
      last.upTo = open.upTo;
    } else {
      this.#waiting.push({ window: open.window, key: open.key, upTo: open.upTo });
    }
    if (this.#inFlight === undefined) this.#inFlight = this.#drain();
  }

  async #drain(): Promise<void> {
    try {
      for (let next = this.#waiting.shift(); next !== undefined; next = this.#waiting.shift()) {
        for (const window of fitted(next.window)) {
          this.crossings += 1;
          const { decision } = await this.#sink.dispatch(window);
          if (decision.type === "stop") {
            this.#stop = decision;
            this.#waiting = [];
            this.#controller.abort(new Error(`stopped by a model.stream hook: ${decision.reason}`));
            break;
          }
        }
        if (this.#stop === undefined) this.#onSeen?.(next.upTo);
      }
    } catch (error) {
      this.#error = error;
    } finally {
      this.#inFlight = undefined;
    }
  }
}

/**
 * A window within the protocol's text limit: a delta longer than `MAX_TEXT_CHARS` (one huge provider chunk,
 * or windows merged behind a slow hook) crosses in several windows, so every character is seen once; each
 * `aggregated` is the last `MAX_TEXT_CHARS` characters of the output up to its delta's end.
 */
function fitted(given: Window): Window[] {
  // A provider's call id past the protocol's limit is cut to it (the model adapter refuses such replies).
  const window =
    given.callId !== undefined && given.callId.length > MAX_NAME_CHARS
      ? { ...given, callId: given.callId.slice(0, MAX_NAME_CHARS) }
      : given;
  const { delta, aggregated } = window;
  if (delta.length <= MAX_TEXT_CHARS && aggregated.length <= MAX_TEXT_CHARS) return [window];
  const before = aggregated.length - delta.length;
  const pieces: Window[] = [];
  for (let start = 0; start < delta.length || start === 0; start += MAX_TEXT_CHARS) {
    const end = Math.min(start + MAX_TEXT_CHARS, delta.length);
    const upTo = aggregated.slice(0, before + end);
    pieces.push({ ...window, delta: delta.slice(start, end), aggregated: upTo.slice(-MAX_TEXT_CHARS) });
  }
  return pieces;
}

function windowOf(turn: number, kind: StreamKind, delta: string, aggregated: string, callId?: string): Window {
  return callId === undefined ? { turn, kind, delta, aggregated } : { turn, kind, delta, aggregated, callId };
}
