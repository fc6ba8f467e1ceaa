import type { HookRecord } from "../dispatch/index.js";
import { failureText, type HookPoint, type JsonValue, type ToolCall } from "../protocol/index.js";
import { oneLine, type Printed, printable } from "../terminal/index.js";
import type { RunEvent } from "./events.js";

/** Options of the readable trace. */
export interface TraceOptions {
  /** Characters of text (contents, arguments) shown before `…`. Default 72. */
  readonly width?: number;
}

/**
 * One run event as readable trace lines (without trailing newline), or undefined for events the trace
 * leaves out (messages entering the transcript, raw `hook.called` duplicates of `hooks.decided`). Every
 * hook call shows its point, hook id (which carries the bundle version), what it decided and how long it took.
 * Text from tenants, models and tools (reasons, messages, names, run ids) is `printable` and kept on its
 * line: a reason cannot move the cursor or erase a line to change which tenant a decision is shown under.
 */
export function formatRunEvent(event: RunEvent, options: TraceOptions = {}): Printed | undefined {
  const text = eventText(event, options);
  // The trace's own line breaks stay; tenant text was kept on its line where it was embedded.
  return text === undefined ? undefined : printable(text, { keepNewlines: true });
}

function eventText(event: RunEvent, options: TraceOptions): string | undefined {
  const width = options.width ?? 72;
  switch (event.type) {
    case "run.started": {
      const bundle = event.bundle
        ? `bundle v${event.bundle.version} (${short(event.bundle.hash)})`
        : "no tenant bundle";
      const shadow = event.shadow ? ` · shadow v${event.shadow.version}` : "";
      return `▶ ${event.tenantId} · ${printable(event.runId)} · ${bundle}${shadow}${event.resumed ? " · resumed" : ""}`;
    }
    case "run.warning":
      return `  ⚠ ${event.code}: ${event.message}`;
    case "turn.started":
      return `  turn ${event.turn}`;
    case "hooks.decided": {
      const lines: string[] = [];
      for (const record of event.records as readonly HookRecord[]) lines.push(recordLine(record, width));
      const decision = event.decision;
      if ("by" in decision && decision.by?.failure !== undefined) {
        lines.push(`${pad("", 4)}${pad("", 16)}↳ ${decision.by.failure} under policy closed → ${decision.type}`);
      }
      return lines.join("\n");
    }
    case "model.replied": {
      const calls = event.message.toolCalls ?? [];
      const said =
        calls.length > 0
          ? calls.map((c) => callText(c, width)).join(", ")
          : `“${oneLine(event.message.content, width)}”`;
      return `    ${pad(event.byHook ? "hook reply" : "model", 16)}${said}`;
    }
    case "tool.finished":
      return `    ${pad(`⇒ ${printable(event.call.name)}`, 16)}${event.result.isError ? "✗" : "✓"} ${oneLine(event.result.content, width)}`;
    case "inbound.dropped":
      return `    ${pad("inbound", 16)}dropped (${oneLine(event.reason, width)})`;
    case "quarantine.entered":
      return `  ⚠ quarantine: ${event.tenantId} bundle ${short(event.bundleHash)} for ${Math.round(event.cooldownMs / 1000)} s (strike ${event.strike}, after ${event.code})`;
    case "quarantine.exited":
      return `  ✓ quarantine over: ${event.tenantId} bundle ${short(event.bundleHash)}`;
    case "run.finished": {
      const why = event.reason ? ` (${oneLine(event.reason, width)})` : "";
      const usage = `${event.usage.inputTokens} tokens in / ${event.usage.outputTokens} out`;
      return `■ ${event.stopReason}${why} · ${event.turns} turn${event.turns === 1 ? "" : "s"} · ${usage}`;
    }
    case "hook.shadowed": {
      const deciding = event.record;
      if (deciding === undefined)
        return `${recordLine(event.shadow, width)} (shadow, discarded; the deciding version has no hook here)`;
      const same = sameOutcome(deciding, event.shadow) ? "same as the deciding call" : "differs";
      return `${recordLine(event.shadow, width, "  shadow")} (discarded; ${same})`;
    }
    case "hook.called":
      // Decision records are shown once, with their point's `hooks.decided`; observe-only calls have no other event.
      return event.record.observe === true ? recordLine(event.record, width) : undefined;
    case "message.added":
    case "model.delta":
      // Deltas are the text as it streams; `model.replied` shows the whole reply once.
      return undefined;
    default: {
      const never: never = event;
      return never;
    }
  }
}

/** Whether two calls ended alike: the same result, or failures with the same code. */
function sameOutcome(a: HookRecord, b: HookRecord): boolean {
  const [x, y] = [a.outcome, b.outcome];
  if (x.type === "failed" || y.type === "failed") {
    return x.type === "failed" && y.type === "failed" && x.failure.code === y.failure.code;
  }
  if (x.type === "skipped" || y.type === "skipped") return x.type === y.type;
  return JSON.stringify(x.result) === JSON.stringify(y.result);
}

function recordLine(record: HookRecord, width: number, label: string = record.point): string {
  const ms = `${record.runMs.toFixed(2)} ms`;
  const outcome =
    record.outcome.type === "failed"
      ? `FAILED ${oneLine(failureText(record.outcome.failure), width * 3)}`
      : record.outcome.type === "skipped"
        ? `skipped: ${record.outcome.reason}`
        : record.outcome.result === null
          ? "no-op"
          : resultText(record.point, record.outcome.result as Record<string, JsonValue | undefined>, width);
  const observe = record.observe === true ? "observe: " : "";
  return `    ${pad(label, 16)}${pad(record.hookId, 24)}${observe}${outcome} · ${ms}`;
}

/** `block “reason”`, `rewrite args → {…}`, `patch content → “…”`, … */
function resultText(point: HookPoint, result: Record<string, JsonValue | undefined>, width: number): string {
  const type = String(result.type);
  const text = (key: string) => (typeof result[key] === "string" ? ` “${oneLine(String(result[key]), width)}”` : "");
  switch (type) {
    case "rewrite":
      if (point === "tool.call") return `rewrite args → ${oneLine(JSON.stringify(result.args), width)}`;
      return point === "run.start" ? "rewrite input" : "rewrite message";
    case "block":
      return `block${text("reason")}${result.terminate === true ? " (terminate)" : ""}`;
    case "patch": {
      if (point === "tool.result") {
        const fields = Object.keys(result).filter((k) => k !== "type");
        return `patch ${printable(fields.join(", "))}${text("content")}`;
      }
      const { type: _, ...fields } = result;
      return `patch ${oneLine(JSON.stringify(fields), width)}`;
    }
    case "restrict":
      return `restrict → [${Array.isArray(result.allow) ? printable(result.allow.join(", ")) : ""}]`;
    case "replace":
      return point === "context.prepare"
        ? `replace (${Array.isArray(result.messages) ? result.messages.length : 0} messages)`
        : "replace message";
    case "repair":
      return `repair → ${printable(String(result.name))}`;
    case "continue":
      return `continue${text("message")}`;
    case "retry":
      return `retry${text("feedback")}`;
    default:
      return `${type}${text("reason")}`;
  }
}

function callText(call: ToolCall, width: number): string {
  return `${printable(call.name)}(${oneLine(JSON.stringify(call.args), width)})`;
}
function pad(text: string, size: number): string {
  return text.length >= size ? `${text} ` : text.padEnd(size);
}

function short(hash: string): string {
  return `${hash.slice(0, 15)}…`;
}

/**
 * A stateful trace of one run: `formatRunEvent` per event, except that a quarantine change or a shadow
 * call (emitted while the point is still being dispatched) is shown after that point's lines.
 */
export function runTrace(options: TraceOptions = {}): (event: RunEvent) => Printed[] {
  let held: Printed[] = [];
  return (event) => {
    const line = formatRunEvent(event, options);
    // A shadow call with no deciding call beside it has no `hooks.decided` to follow: it is shown at once.
    const hold = event.type === "hook.shadowed" ? event.record !== undefined : event.type.startsWith("quarantine.");
    if (hold) {
      if (line !== undefined) held.push(line);
      return [];
    }
    if (line === undefined) return [];
    if (event.type !== "hooks.decided" && event.type !== "run.finished") return [line];
    const out = event.type === "hooks.decided" ? [line, ...held] : [...held, line];
    held = [];
    return out;
  };
}
