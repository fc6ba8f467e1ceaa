/**
 * `streamWindow.hold`: deltas reach `onEvent` only once the `model.stream` hooks let their window pass, so
 * the text a hook stops on (and all after it) never reaches the user.
 */
import { describe, expect, it } from "vitest";
import { type AgentEvent, runAgentLoop, scriptedModel } from "../../src/agent/index.js";
import type { HookEvent } from "../../src/protocol/index.js";
import { runScope, watcher } from "./stream-helpers.js";

const turns = [{ chunks: ["The ", "password ", "is ", "hunter2", " and ", "more."] }];

async function streamed(hold: boolean) {
  const events: AgentEvent[] = [];
  const windows: HookEvent<"model.stream">[] = [];
  const result = await runAgentLoop({
    hooks: runScope([watcher(windows, (w) => w.aggregated.includes("hunter2"))]),
    model: scriptedModel(turns),
    input: "go",
    streamWindow: { windowChars: 1, windowMs: 60_000, hold },
    onEvent: (e) => events.push(e),
  });
  const text = events.flatMap((e) => (e.type === "model.delta" ? [e.delta] : [])).join("");
  return { result, text, windows };
}

describe("hold mode", () => {
  it("releases no delta the stream hook stopped on", async () => {
    const held = await streamed(true);
    expect(held.result.stopReason).toBe("stopped");
    expect(held.text).not.toContain("hunter2");
    expect(held.text.length).toBeGreaterThan(0);
    expect("The password is hunter2 and more.".startsWith(held.text)).toBe(true);
    // Without hold the same stop lands after the user saw the secret.
    const live = await streamed(false);
    expect(live.result.stopReason).toBe("stopped");
    expect(live.text).toContain("hunter2");
  });

  it("releases every delta, in order and before the reply, when no hook stops", async () => {
    const events: AgentEvent[] = [];
    const result = await runAgentLoop({
      hooks: runScope([watcher([])]),
      model: scriptedModel([{ reasoning: ["a", "b"], chunks: ["Hel", "lo"] }]),
      input: "go",
      streamWindow: { windowChars: 2, windowMs: 60_000, hold: true },
      onEvent: (e) => events.push(e),
    });
    expect(result.stopReason).toBe("completed");
    const kinds = events.flatMap((e) => (e.type === "model.delta" ? [[e.kind, e.delta]] : []));
    expect(kinds).toEqual([
      ["reasoning", "a"],
      ["reasoning", "b"],
      ["text", "Hel"],
      ["text", "lo"],
    ]);
    const lastDelta = events.findLastIndex((e) => e.type === "model.delta");
    expect(lastDelta).toBeLessThan(events.findIndex((e) => e.type === "model.replied"));
  });

  it("rejects a hold that is not a boolean", async () => {
    const result = await runAgentLoop({
      hooks: runScope([]),
      model: scriptedModel([{ text: "hi" }]),
      input: "go",
      streamWindow: { hold: "yes" as unknown as boolean },
    });
    expect(result.stopReason).toBe("error");
    expect(result.reason).toContain("streamWindow.hold");
  });
});
