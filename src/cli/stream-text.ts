import type { RunEvent } from "../runtime/index.js";
import { printable } from "../terminal/index.js";

/**
 * The human trace with streamed text shown as it arrives: a turn's text deltas go on one `streaming` line
 * (printable, so a model cannot move the cursor), which ends before the next traced line.
 */
export function streamingTrace(trace: (event: RunEvent) => string[]): (event: RunEvent) => string {
  let streaming = false;
  return (event) => {
    if (event.type === "model.delta") {
      if (event.kind !== "text") return "";
      const head = streaming ? "" : `    ${"streaming".padEnd(16)}`;
      streaming = true;
      return head + printable(event.delta);
    }
    const lines = trace(event);
    if (lines.length === 0) return "";
    const out = `${streaming ? "\n" : ""}${lines.join("\n")}\n`;
    streaming = false;
    return out;
  };
}
