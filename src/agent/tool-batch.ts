import type { DecidedBy, StopDecision } from "../dispatch/index.js";
import type { JsonObject, ToolCall, ToolMessage, ToolResult } from "../protocol/index.js";
import { raceAbort } from "./abort.js";
import { addMessage, decided, type RunContext } from "./run-context.js";
import type { Tool } from "./tool.js";

/** The tools of one turn: every tool the run knows, and the names the model may call this turn. */
export interface TurnTools {
  readonly byName: ReadonlyMap<string, Tool>;
  readonly active: readonly string[];
}

export interface BatchOutcome {
  /** One per call, in call order, already appended to the transcript. */
  readonly results: ToolMessage[];
  /** Set when a `block` or a `tool.result` patch asked to end the run after this batch. */
  readonly terminate: { readonly reason: string; readonly by: DecidedBy | undefined } | undefined;
  /** Set when a hook stopped the run during the batch. */
  readonly stop: StopDecision | undefined;
  /** Set when the batch was cut short by the signal or a host error (the remaining calls were cancelled). */
  readonly interrupted: { readonly error: unknown } | undefined;
}

type How = "executed" | "blocked" | "invalid" | "skipped" | "cancelled";

/** A call after `tool.invalid` and `tool.call`: either ready to run, or already answered. */
type Prepared =
  | { readonly kind: "run"; readonly call: ToolCall; readonly tool: Tool; readonly args: unknown }
  | {
      readonly kind: "answered";
      readonly call: ToolCall;
      readonly how: How;
      readonly result: ToolResult;
      readonly terminate?: NonNullable<BatchOutcome["terminate"]>;
    }
  | { readonly kind: "stop"; readonly stop: StopDecision };

/**
 * Runs one assistant message's tool calls through `tool.invalid`, `tool.call`, the tool and `tool.result`.
 * Sequential by default; `parallel` decides every call first (hooks of a run are serialised anyway), runs
 * the tools concurrently, then checks the results in call order. Never throws: every call gets exactly one
 * tool result, also when a hook stops the run, the signal aborts or the host fails mid-batch.
 */
export async function runToolBatch(
  run: RunContext,
  calls: readonly ToolCall[],
  tools: TurnTools,
  options: { readonly parallel: boolean; readonly malformedArgs: Readonly<Record<string, string>> | undefined },
): Promise<BatchOutcome> {
  const results: ToolMessage[] = [];
  let terminate: BatchOutcome["terminate"];
  let stop: StopDecision | undefined;
  let interrupted: BatchOutcome["interrupted"];
  const finish = async (prepared: Exclude<Prepared, { kind: "stop" }>, result: ToolResult, started: number) => {
    const executed = prepared.kind === "run";
    const dispatched = await run.hooks.toolResult({ call: prepared.call, executed, result }, { signal: run.signal });
    const checked = decided(run, "tool.result", dispatched);
    const how = prepared.kind === "run" ? "executed" : prepared.how;
    if (checked.type === "stop") {
      stop = checked;
      record(prepared.call, how, result, started);
      return;
    }
    if (checked.terminate && !terminate) {
      const by = dispatched.records.findLast(
        (r) => r.outcome.type === "decided" && r.outcome.result?.type === "patch" && r.outcome.result.terminate,
      );
      terminate = {
        reason: `terminated after \`${prepared.call.name}\``,
        by: by && { hookId: by.hookId, source: by.source },
      };
    }
    record(prepared.call, how, checked.result, started);
  };
  const record = (call: ToolCall, how: How, result: ToolResult, started: number) => {
    const message: ToolMessage = {
      role: "tool",
      toolCallId: call.id,
      name: call.name,
      content: result.content,
      isError: result.isError,
    };
    results.push(message);
    addMessage(run, message);
    run.emit({ type: "tool.finished", turn: run.turn, call, how, result, durationMs: run.clock() - started });
  };

  try {
    if (!options.parallel) {
      for (const [index, call] of calls.entries()) {
        const started = run.clock();
        const prepared = await prepare(run, call, index, calls.length, tools, options.malformedArgs);
        if (prepared.kind === "stop") {
          stop = prepared.stop;
          break;
        }
        if (prepared.kind === "answered" && prepared.terminate && !terminate) terminate = prepared.terminate;
        const result = prepared.kind === "run" ? await execute(run, prepared) : prepared.result;
        await finish(prepared, result, started);
        if (stop) break;
      }
    } else {
      const started = run.clock();
      const prepared: Exclude<Prepared, { kind: "stop" }>[] = [];
      for (const [index, call] of calls.entries()) {
        const one = await prepare(run, call, index, calls.length, tools, options.malformedArgs);
        if (one.kind === "stop") {
          stop = one.stop;
          break;
        }
        if (one.kind === "answered" && one.terminate && !terminate) terminate = one.terminate;
        prepared.push(one);
      }
      if (!stop) {
        const outputs = await Promise.all(prepared.map((p) => (p.kind === "run" ? execute(run, p) : p.result)));
        for (const [i, p] of prepared.entries()) {
          const output = outputs[i];
          if (output === undefined) break;
          await finish(p, output, started);
          if (stop) break;
        }
      }
    }
  } catch (error) {
    interrupted = { error };
  }

  if (results.length < calls.length) {
    const why = run.signal.aborted
      ? "cancelled: the run was aborted before this call finished"
      : stop
        ? `cancelled: the run was stopped (${stop.reason})`
        : "cancelled: the host failed before this call finished";
    for (const call of calls.slice(results.length))
      record(call, "cancelled", { content: why, isError: true }, run.clock());
  }
  return { results, terminate, stop, interrupted };
}

async function prepare(
  run: RunContext,
  original: ToolCall,
  index: number,
  size: number,
  tools: TurnTools,
  malformedArgs: Readonly<Record<string, string>> | undefined,
): Promise<Prepared> {
  let call = original;
  let problem = invalidity(call, tools, malformedArgs?.[call.id]);
  if (problem) {
    const event = { call, reason: problem.reason, available: [...tools.active] };
    const decision = decided(run, "tool.invalid", await run.hooks.toolInvalid(event, { signal: run.signal }));
    switch (decision.type) {
      case "stop":
        return { kind: "stop", stop: decision };
      case "fail":
        return answered(call, "invalid", `invalid tool call: ${problem.detail}`, true);
      case "retry":
        return answered(call, "invalid", decision.feedback, true);
      case "skip":
        return answered(call, "skipped", `skipped: ${decision.reason}`, false);
      case "repair": {
        call = { id: call.id, name: decision.name, args: decision.args ?? call.args };
        problem = invalidity(call, tools, decision.args === undefined ? malformedArgs?.[call.id] : undefined);
        if (problem) return answered(call, "invalid", `invalid tool call (after repair): ${problem.detail}`, true);
        break;
      }
      default: {
        const never: never = decision;
        return never;
      }
    }
  }
  // `invalidity` returned nothing, so the tool exists.
  const tool = tools.byName.get(call.name) as Tool;
  const validateArgs = (args: JsonObject) => argsProblem(tool, args);
  const decision = decided(
    run,
    "tool.call",
    await run.hooks.toolCall({ call, batch: { index, size } }, { signal: run.signal, validateArgs }),
  );
  switch (decision.type) {
    case "stop":
      return { kind: "stop", stop: decision };
    case "block": {
      const blocked = answered({ ...call, args: decision.args }, "blocked", `blocked: ${decision.reason}`, true);
      return decision.terminate ? { ...blocked, terminate: { reason: decision.reason, by: decision.by } } : blocked;
    }
    case "execute": {
      const effective = decision.rewritten ? { ...call, args: decision.args } : call;
      const parsed = tool.parameters.safeParse(effective.args);
      if (!parsed.success)
        return answered(effective, "invalid", `invalid tool call: ${issueText(parsed.error.issues)}`, true);
      return { kind: "run", call: effective, tool, args: parsed.data };
    }
    default: {
      const never: never = decision;
      return never;
    }
  }
}

function answered(call: ToolCall, how: How, content: string, isError: boolean): Prepared & { kind: "answered" } {
  return { kind: "answered", call, how, result: { content, isError } };
}

async function execute(run: RunContext, prepared: Prepared & { kind: "run" }): Promise<ToolResult> {
  run.signal.throwIfAborted();
  try {
    return await raceAbort(
      prepared.tool.execute(prepared.args, { callId: prepared.call.id, signal: run.signal }),
      run.signal,
    );
  } catch (error) {
    run.signal.throwIfAborted();
    return { content: `error: ${error instanceof Error ? error.message : String(error)}`, isError: true };
  }
}

type InvalidReason = "unknownTool" | "notAllowed" | "badArgs";

function invalidity(
  call: ToolCall,
  tools: TurnTools,
  malformed: string | undefined,
): { reason: InvalidReason; detail: string } | undefined {
  const tool = tools.byName.get(call.name);
  if (!tool)
    return { reason: "unknownTool", detail: `there is no tool \`${call.name}\`; available: ${list(tools.active)}` };
  if (!tools.active.includes(call.name)) {
    return {
      reason: "notAllowed",
      detail: `tool \`${call.name}\` is not allowed this turn; available: ${list(tools.active)}`,
    };
  }
  if (malformed !== undefined) return { reason: "badArgs", detail: `arguments of \`${call.name}\`: ${malformed}` };
  const problem = argsProblem(tool, call.args);
  return problem === undefined ? undefined : { reason: "badArgs", detail: `arguments of \`${call.name}\`: ${problem}` };
}

function argsProblem(tool: Tool, args: JsonObject): string | undefined {
  const parsed = tool.parameters.safeParse(args);
  return parsed.success ? undefined : issueText(parsed.error.issues);
}

function issueText(issues: readonly { path: PropertyKey[]; message: string }[]): string {
  return issues
    .slice(0, 3)
    .map((i) => (i.path.length > 0 ? `${i.path.map(String).join(".")}: ${i.message}` : i.message))
    .join("; ");
}

function list(names: readonly string[]): string {
  return names.length > 0 ? names.join(", ") : "none";
}
