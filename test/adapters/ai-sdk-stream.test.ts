import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { stepCountIs, streamText, tool } from "ai";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { guardAiSdk } from "../../src/adapters/ai-sdk/index.js";
import type { AgentEvent } from "../../src/agent/index.js";
import type { HookRuntime } from "../../src/runtime/index.js";
import {
  type ChatCompletionsServer,
  endlessStream,
  sseChunk,
  startChatCompletionsServer,
} from "../support/chat-completions-server.js";
import { frameworkRuntime } from "../support/framework-runtime.js";

/**
 * `guardAiSdk` with `streamText`: the provider's text, reasoning and tool-input deltas pass through the
 * tenant's `model.stream` hook (hooks/stream-guard, process sandbox) and its stop ends the stream.
 */

let runtime: HookRuntime;
let close: () => Promise<void>;
let server: ChatCompletionsServer | undefined;

beforeAll(async () => {
  ({ runtime, close } = await frameworkRuntime("hooks/stream-guard/index.ts"));
});
afterAll(() => close());
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const KEY = "sk-ABCDEFGHIJKLMNOPQRSTUV";

async function guardedStream(turns: Parameters<typeof startChatCompletionsServer>[0]) {
  server = await startChatCompletionsServer(turns);
  const provider = createOpenAICompatible({ name: "local", baseURL: server.baseURL, includeUsage: true });
  const events: AgentEvent[] = [];
  const run = await runtime.openRun({ tenantId: "acme", onEvent: (e) => events.push(e as AgentEvent) });
  const guard = guardAiSdk(run, { streamWindow: { windowChars: 16 } });
  const ran: string[] = [];
  const shell = tool({
    description: "Runs a shell command",
    inputSchema: z.object({ command: z.string() }),
    execute: async ({ command }) => {
      ran.push(command);
      return "a.txt";
    },
  });
  const result = streamText({
    model: guard.model(provider.chatModel("local")),
    tools: guard.tools({ shell }),
    prepareStep: guard.prepareStep,
    onStepFinish: guard.onStepFinish,
    stopWhen: [guard.stopWhen, stepCountIs(5)],
    prompt: "List the files",
  });
  const text = await result.text;
  await guard.end();
  const windows = events.filter((e) => e.type === "hooks.decided" && e.point === "model.stream");
  const deltas = events.flatMap((e) => (e.type === "model.delta" ? [e] : []));
  return { text, halt: guard.halt, ran, windows, deltas };
}

describe("guardAiSdk with streamText", () => {
  it("passes the streamed text through the tenant's model.stream hook and lets a clean stream through", async () => {
    const { text, halt, ran, windows, deltas } = await guardedStream([
      { chunks: ["Listing ", "the files ", "now."], toolCalls: [{ name: "shell", args: { command: "ls" } }] },
      { text: "One file: a.txt." },
    ]);
    expect(halt).toBeUndefined();
    expect(ran).toEqual(["ls"]);
    expect(text).toBe("One file: a.txt.");
    expect(windows.length).toBeGreaterThanOrEqual(3);
    // The run reports each delta as isohook's loop does, by turn.
    const text1 = deltas.filter((d) => d.turn === 1 && d.kind === "text").map((d) => d.delta);
    expect(text1.join("")).toBe("Listing the files now.");
    expect(
      deltas
        .filter((d) => d.kind === "toolArgs")
        .map((d) => d.delta)
        .join(""),
    ).toBe('{"command":"ls"}');
    expect(
      deltas
        .filter((d) => d.turn === 2)
        .map((d) => d.delta)
        .join(""),
    ).toBe("One file: a.txt.");
  });

  it.each([
    ["text", { chunks: ["Your key is ", KEY.slice(0, 10), KEY.slice(10)] }],
    ["reasoning", { reasoning: ["The key: ", KEY], text: "Done." }],
    ["toolArgs", { toolCalls: [{ name: "shell", args: { command: `export KEY=${KEY}` } }] }],
  ])("stops the run when the hook sees a key in the %s", async (kind, turn) => {
    const { halt, ran } = await guardedStream([turn, { text: "unreached" }]);
    expect(halt).toEqual({ kind: "stop", reason: `credential in the model's ${kind}` });
    expect(ran).toEqual([]);
  });

  it("ends a never-ending stream at the hook's stop and aborts the provider request", async () => {
    const { handler, closed } = endlessStream((res, n) =>
      res.write(sseChunk({ content: n === 30 ? ` ${KEY} ` : "lorem " })),
    );
    const { text, halt } = await guardedStream([handler]);
    expect(halt).toEqual({ kind: "stop", reason: "credential in the model's text" });
    expect(text).toBe("");
    await closed; // never resolves (the test times out) if the request was left running
  });
});
