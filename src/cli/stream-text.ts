import type { RunEvent } from "../runtime/index.js";
import { line, lines, type Printed } from "../terminal/index.js";

/**
 * The human trace with streamed text shown as it arrives: a turn's text deltas go on one `streaming` line
 * (printable, so a model cannot move the cursor), which ends before the next traced line.
 */
export function streamingTrace(trace: (event: RunEvent) => Printed[]): (event: RunEvent) => Printed | undefined {
  let streaming = false;
  return (event) => {
    if (event.type === "model.delta") {
      if (event.kind !== "text") return undefined;
      const head = streaming ? "" : `    ${"streaming".padEnd(16)}`;
      streaming = true;
      return line`${head}${event.delta}`;
    }
    const traced = trace(event);
    if (traced.length === 0) return undefined;
    // An empty first line ends the streaming line.
    const out = lines(streaming ? [line``, ...traced] : traced);
    streaming = false;
    return out;
  };
}
