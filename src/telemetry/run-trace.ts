import {
  type Attributes,
  type Context,
  context,
  type HrTime,
  type Span,
  SpanStatusCode,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import type { HookPoint } from "../protocol/index.js";
import { type CallReach, decisionOf, type HookCallView, type QuarantineEntry } from "./hook-call.js";
import { ATTR, EVENT, SPAN } from "./names.js";
import type { RecentWorkerDeath } from "./worker-exits.js";

/** How a run ended, as its `run.end` event says. */
export interface RunEnding {
  readonly stopReason: string;
  readonly turns: number;
  readonly usage: { readonly inputTokens: number; readonly outputTokens: number };
}

/** A span by its W3C ids (lowercase hex: 32 digits of trace id, 16 of span id). */
export interface SpanRef {
  readonly traceId: string;
  readonly spanId: string;
}

/**
 * Now, on one clock for every span of a run (the process's high-resolution clock since its time origin).
 * An SDK left to time spans itself anchors each to `Date.now()`, whole milliseconds apart, so a hook call
 * could seem to start before its dispatch.
 */
export function hrNow(): HrTime {
  const ms = performance.timeOrigin + performance.now();
  const seconds = Math.floor(ms / 1000);
  return [seconds, Math.min(999_999_999, Math.round((ms - seconds * 1000) * 1e6))];
}

/**
 * The spans of one run, all recording: `invoke_agent` (the run) → `isohook.turn` → `isohook.dispatch` (one
 * hook point) → `isohook.hook` (one hook call). Parents are explicit contexts, so the tree holds without a
 * context manager; the run's parent is the context active when the run opened (a platform's request span).
 * Every span is of kind INTERNAL (the default). Made only when the run span records: a run the platform's
 * sampler drops starts no other span.
 *
 * A run's dispatches are serialised (`RunDispatcher`), so one dispatch is open at a time and a hook call's span
 * starts where the previous call of the dispatch ended: it is created when the call ends, with its start
 * time, and never while the call runs.
 */
export class RunTrace {
  readonly #tracer: Tracer;
  readonly #tenantId: string;
  readonly #deaths: RecentWorkerDeath;
  readonly #run: Span;
  readonly #runContext: Context;
  #turn: Span | undefined;
  #turnContext: Context | undefined;
  #dispatch: Span | undefined;
  #dispatchContext: Context | undefined;
  #hookStart: HrTime = [0, 0];
  #hooks = 0;
  #quarantine: (QuarantineEntry & { readonly at: HrTime }) | undefined;

  constructor(tracer: Tracer, run: Span, tenantId: string, deaths: RecentWorkerDeath) {
    this.#tracer = tracer;
    this.#deaths = deaths;
    this.#run = run;
    this.#tenantId = tenantId;
    this.#runContext = trace.setSpan(context.active(), run);
  }

  beginTurn(turn: number): void {
    const now = hrNow();
    this.#turn?.end(now);
    this.#turn = this.#tracer.startSpan(
      SPAN.turn,
      { startTime: now, attributes: { [ATTR.tenant]: this.#tenantId, [ATTR.turn]: turn } },
      this.#runContext,
    );
    this.#turnContext = trace.setSpan(this.#runContext, this.#turn);
  }

  /** A streamed delta: an event on the turn span, with its kind, size and tool call. */
  streamed(kind: string, chars: number, callId: string | undefined): void {
    const attributes: Attributes = { [ATTR.streamKind]: kind, [ATTR.deltaChars]: chars };
    if (callId !== undefined) attributes[ATTR.toolCallId] = callId;
    this.#turn?.addEvent(EVENT.delta, attributes, hrNow());
  }

  beginDispatch(point: HookPoint): void {
    const attributes: Attributes = { [ATTR.tenant]: this.#tenantId, [ATTR.point]: point };
    const parent = this.#turnContext ?? this.#runContext;
    this.#hookStart = hrNow();
    this.#dispatch = this.#tracer.startSpan(SPAN.dispatch, { startTime: this.#hookStart, attributes }, parent);
    this.#dispatchContext = trace.setSpan(parent, this.#dispatch);
    this.#hooks = 0;
  }

  /** `decision` is the point's combined decision type; undefined when the dispatch threw (an abort). */
  endDispatch(decision: string | undefined): void {
    const span = this.#dispatch;
    if (span === undefined) return;
    span.setAttribute(ATTR.hooks, this.#hooks);
    if (decision !== undefined) span.setAttribute(ATTR.decision, decision);
    else span.setStatus({ code: SpanStatusCode.ERROR });
    span.end(hrNow());
    this.#dispatch = undefined;
    this.#dispatchContext = undefined;
  }

  /** A quarantine the current call's strike started: an event on that call's span. */
  quarantined(entry: QuarantineEntry): void {
    this.#quarantine = { ...entry, at: hrNow() };
  }

  hookCalled(call: HookCallView, reach: CallReach): void {
    const end = hrNow();
    const parent = this.#dispatchContext ?? this.#turnContext ?? this.#runContext;
    const span = this.#tracer.startSpan(
      SPAN.hook,
      { startTime: this.#hookStart, attributes: this.#attributesOf(call, reach) },
      parent,
    );
    const { outcome } = call;
    if (outcome.type === "failed") {
      span.setStatus({ code: SpanStatusCode.ERROR });
      const { code } = outcome.failure;
      const bystander = outcome.failure.bystander === true;
      const death = this.#deaths.current;
      if (code === "sandbox_crashed") {
        const attributes: Attributes = { [ATTR.bystander]: bystander };
        if (death !== undefined) attributes[ATTR.workerReason] = death;
        span.addEvent(EVENT.workerDied, attributes, end);
      } else if (
        death === "deadline" &&
        reach === "sandbox" &&
        !bystander &&
        (code === "timeout" || code === "memory_limit")
      ) {
        // `reach`: a call the budget refused right after the kill fails `timeout` too, and never ran.
        span.addEvent(EVENT.workerDied, { [ATTR.bystander]: false, [ATTR.workerReason]: death }, end);
      }
    }
    const quarantine = this.#quarantine;
    if (quarantine !== undefined) {
      this.#quarantine = undefined;
      span.addEvent(
        EVENT.quarantine,
        {
          [ATTR.errorType]: quarantine.code,
          [ATTR.strike]: quarantine.strike,
          [ATTR.cooldownMs]: quarantine.cooldownMs,
        },
        quarantine.at,
      );
    }
    span.end(end);
    this.#hookStart = end;
    this.#hooks++;
  }

  /** The run span, for a resumed run to link to. */
  get ref(): SpanRef {
    const { traceId, spanId } = this.#run.spanContext();
    return { traceId, spanId };
  }

  end(ending: RunEnding | undefined): void {
    const now = hrNow();
    this.#turn?.end(now);
    this.#turn = undefined;
    const span = this.#run;
    if (ending !== undefined) {
      span.setAttributes({
        [ATTR.stopReason]: ending.stopReason,
        [ATTR.turns]: ending.turns,
        [ATTR.inputTokens]: ending.usage.inputTokens,
        [ATTR.outputTokens]: ending.usage.outputTokens,
      });
      if (ending.stopReason === "error") {
        span.setAttribute(ATTR.errorType, "error");
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
    }
    span.end(now);
  }

  #attributesOf(call: HookCallView, reach: CallReach): Attributes {
    const attributes: Attributes = {
      [ATTR.tenant]: this.#tenantId,
      [ATTR.hookId]: call.hookId,
      [ATTR.source]: call.source,
      [ATTR.point]: call.point,
      [ATTR.policy]: call.policy,
      [ATTR.outcome]: call.outcome.type,
      [ATTR.cpuMs]: call.cpuMs,
      [ATTR.runMs]: call.runMs,
    };
    const bundle = call.bundle;
    if (bundle !== undefined) {
      attributes[ATTR.bundleVersion] = bundle.version;
      attributes[ATTR.bundleHash] = bundle.hash;
    }
    if (call.queuedMs !== undefined) attributes[ATTR.queuedMs] = call.queuedMs;
    if (call.loadMs !== undefined) attributes[ATTR.loadMs] = call.loadMs;
    if (call.loadAfterRecycle === true) attributes[ATTR.loadAfterRecycle] = true;
    if (call.outcome.type === "failed") {
      attributes[ATTR.errorType] = call.outcome.failure.code;
      if (call.outcome.failure.bystander === true) attributes[ATTR.bystander] = true;
    } else {
      attributes[ATTR.decision] = decisionOf(call) ?? "noop";
    }
    if (reach !== "sandbox") attributes[ATTR.reach] = reach;
    return attributes;
  }
}
