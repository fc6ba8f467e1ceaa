import type { JsonObject, ToolCall, ToolResult } from "../protocol/index.js";
import { raceAbort } from "./abort.js";
import { type ApprovalDecisions, type PausedBatch, pendingCall } from "./approval.js";
import { type BatchOutcome, BatchState, type How, type Prepared, type Settled } from "./batch-state.js";
import { decide, type RunContext } from "./run-context.js";
import type { Tool } from "./tool.js";

/** The tools of one turn: every tool the run knows, and the names the model may call this turn. */
export interface TurnTools {
  readonly byName: ReadonlyMap<string, Tool>;
  readonly active: readonly string[];
}

/**
 * Runs one assistant message's tool calls through `tool.invalid`, `tool.call`, the tool and `tool.result`.
 * Sequential by default; `parallel` decides every call first (hooks of a run are serialised anyway), runs
 * the tools concurrently, then checks the results in call order. Never throws: every call gets exactly one
 * tool result, also when a hook stops the run, the signal aborts or the host fails mid-batch, except a call
 * a hook asked about: the batch finishes the others and returns the asked calls `held` (when the run cannot
 * pause, `run.canPause` false, it stops at the first ask and runs no further tool).
 */
export async function runToolBatch(
  run: RunContext,
  calls: readonly ToolCall[],
  tools: TurnTools,
  options: { readonly parallel: boolean; readonly malformedArgs: Readonly<Record<string, string>> | undefined },
): Promise<BatchOutcome> {
  const state = new BatchState(run, calls.length);
  const hold = (index: number, prepared: Prepared & { kind: "ask" }) =>
    state.pending.push({ ...prepared.pending, turn: run.turn, index });
  try {
    if (!options.parallel) {
      for (const [index, call] of calls.entries()) {
        const started = run.clock();
        const prepared = await prepare(run, call, index, calls.length, tools, options.malformedArgs);
        if (prepared.kind === "stop") {
          state.stop = prepared.stop;
          break;
        }
        if (prepared.kind === "ask") {
          hold(index, prepared);
          if (!run.canPause) break;
          continue;
        }
        if (prepared.kind === "answered" && prepared.terminate && !state.terminate)
          state.terminate = prepared.terminate;
        const result = prepared.kind === "run" ? await execute(run, prepared) : prepared.result;
        await state.finish(index, prepared, result, started);
        if (state.stop) break;
      }
    } else {
      const started = run.clock();
      const prepared: { index: number; settled: Settled }[] = [];
      for (const [index, call] of calls.entries()) {
        const one = await prepare(run, call, index, calls.length, tools, options.malformedArgs);
        if (one.kind === "stop") {
          state.stop = one.stop;
          break;
        }
        if (one.kind === "ask") {
          hold(index, one);
          if (!run.canPause) break;
          continue;
        }
        if (one.kind === "answered" && one.terminate && !state.terminate) state.terminate = one.terminate;
        prepared.push({ index, settled: one });
      }
      // A pause that cannot be kept runs none of the batch's tools.
      if (!state.stop && (run.canPause || state.pending.length === 0)) {
        const outputs = await Promise.all(
          prepared.map(({ settled: p }) => (p.kind === "run" ? execute(run, p) : p.result)),
        );
        for (const [i, { index, settled }] of prepared.entries()) {
          const output = outputs[i];
          if (output === undefined) break;
          await state.finish(index, settled, output, started);
          if (state.stop) break;
        }
      }
    }
  } catch (error) {
    state.interrupted = { error };
  }
  return state.outcome(calls);
}

/**
 * Finishes a batch held for approval with a human's decisions (already checked: one per pending call):
 * approved calls run with their effective args, edited ones go through `tool.call` again, rejected ones get
 * `rejected: <reason>`; then `tool.result` for each, and every message joins the transcript in call order.
 */
export async function resumeToolBatch(
  run: RunContext,
  paused: PausedBatch,
  tools: ReadonlyMap<string, Tool>,
  decisions: ApprovalDecisions,
): Promise<BatchOutcome> {
  const calls = paused.message.toolCalls ?? [];
  const state = new BatchState(run, calls.length, paused);
  try {
    for (const pending of paused.pending) {
      if (state.stop) break;
      const started = run.clock();
      const decision = decisions[pending.callId];
      const tool = tools.get(pending.call.name);
      if (decision === undefined || tool === undefined) throw new Error(`no decision or tool for ${pending.callId}`);
      let prepared: Prepared;
      switch (decision.type) {
        case "approve": {
          const call = pendingCall(pending.call, pending.args);
          const parsed = tool.parameters.safeParse(call.args);
          prepared = parsed.success
            ? { kind: "run", call, tool, args: parsed.data }
            : answered(call, "invalid", `invalid tool call: ${issueText(parsed.error.issues)}`, true);
          break;
        }
        case "reject":
          prepared = answered(
            pendingCall(pending.call, pending.args),
            "rejected",
            `rejected: ${decision.reason}`,
            true,
          );
          break;
        case "edit":
          prepared = await decideCall(
            run,
            pendingCall(pending.call, decision.args),
            pending.index,
            calls.length,
            tool,
            true,
          );
          break;
        default: {
          const never: never = decision;
          return never;
        }
      }
      if (prepared.kind === "stop") {
        state.stop = prepared.stop;
        break;
      }
      if (prepared.kind === "ask") throw new Error("an edited call is never held again");
      if (prepared.kind === "answered" && prepared.terminate && !state.terminate) state.terminate = prepared.terminate;
      const result = prepared.kind === "run" ? await execute(run, prepared) : prepared.result;
      await state.finish(pending.index, prepared, result, started);
    }
  } catch (error) {
    state.interrupted = { error };
  }
  return state.outcome(calls);
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
    const { decision } = await decide(run, "tool.invalid", event);
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
  return decideCall(run, call, index, size, tools.byName.get(call.name) as Tool, false);
}

/**
 * `tool.call` for one call. `edited`: a human wrote these args (an approval's edit), so an `ask` is
 * answered already; a block or stop still stands.
 */
async function decideCall(
  run: RunContext,
  call: ToolCall,
  index: number,
  size: number,
  tool: Tool,
  edited: boolean,
): Promise<Prepared> {
  const validateArgs = (args: JsonObject) => argsProblem(tool, args);
  const { decision } = await decide(
    run,
    "tool.call",
    { call, batch: { index, size } },
    { signal: run.signal, validateArgs },
  );
  switch (decision.type) {
    case "stop":
      return { kind: "stop", stop: decision };
    case "block": {
      const blocked = answered({ ...call, args: decision.args }, "blocked", `blocked: ${decision.reason}`, true);
      return decision.terminate ? { ...blocked, terminate: { reason: decision.reason, by: decision.by } } : blocked;
    }
    case "ask":
    case "execute": {
      const effective = decision.rewritten ? { ...call, args: decision.args } : call;
      const parsed = tool.parameters.safeParse(effective.args);
      if (!parsed.success)
        return answered(effective, "invalid", `invalid tool call: ${issueText(parsed.error.issues)}`, true);
      if (decision.type === "execute" || edited) return { kind: "run", call: effective, tool, args: parsed.data };
      const { reason, by } = decision;
      const asked = { callId: call.id, call, args: effective.args, reason, by };
      return {
        kind: "ask",
        pending: decision.question === undefined ? asked : { ...asked, question: decision.question },
      };
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
