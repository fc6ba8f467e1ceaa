import type { DecidedBy, StopDecision } from "../dispatch/index.js";
import type { JsonObject, ToolCall, ToolMessage, ToolResult } from "../protocol/index.js";
import { raceAbort } from "./abort.js";
import { type ApprovalDecisions, type PausedBatch, type PendingApproval, pendingCall } from "./approval.js";
import { addMessage, decided, type RunContext } from "./run-context.js";
import type { Tool } from "./tool.js";

/** The tools of one turn: every tool the run knows, and the names the model may call this turn. */
export interface TurnTools {
  readonly byName: ReadonlyMap<string, Tool>;
  readonly active: readonly string[];
}

export interface BatchOutcome {
  /** One per call, in call order, already appended to the transcript (empty while calls are pending). */
  readonly results: ToolMessage[];
  /** Set when a `block` or a `tool.result` patch asked to end the run after this batch. */
  readonly terminate: { readonly reason: string; readonly by?: DecidedBy | undefined } | undefined;
  /** Set when a hook stopped the run during the batch. */
  readonly stop: StopDecision | undefined;
  /** Set when the batch was cut short by the signal or a host error (the remaining calls were cancelled). */
  readonly interrupted: { readonly error: unknown } | undefined;
  /** Set when hooks asked for approval: every other call is done, these wait for a human. */
  readonly held: Omit<PausedBatch, "message"> | undefined;
}

type How = "executed" | "blocked" | "invalid" | "skipped" | "cancelled" | "rejected";

/** A call after `tool.invalid` and `tool.call`: ready to run, already answered, or held for a human. */
type Prepared =
  | { readonly kind: "run"; readonly call: ToolCall; readonly tool: Tool; readonly args: unknown }
  | {
      readonly kind: "answered";
      readonly call: ToolCall;
      readonly how: How;
      readonly result: ToolResult;
      readonly terminate?: NonNullable<BatchOutcome["terminate"]>;
    }
  | { readonly kind: "ask"; readonly pending: Omit<PendingApproval, "turn" | "index"> }
  | { readonly kind: "stop"; readonly stop: StopDecision };

type Settled = Exclude<Prepared, { kind: "stop" } | { kind: "ask" }>;

/**
 * One batch's results by call index, joined to the transcript in call order: a result waits while an
 * earlier call is pending or still running.
 */
class BatchState {
  readonly #run: RunContext;
  readonly slots: (ToolMessage | null)[];
  readonly pending: PendingApproval[] = [];
  #flushed: number;
  terminate: BatchOutcome["terminate"];
  stop: StopDecision | undefined;
  interrupted: BatchOutcome["interrupted"];

  constructor(run: RunContext, size: number, paused?: Omit<PausedBatch, "message">) {
    this.#run = run;
    this.slots = paused ? [...paused.results] : new Array<ToolMessage | null>(size).fill(null);
    this.#flushed = paused ? firstNull(paused.results) : 0;
    this.terminate = paused?.terminate;
  }

  record(index: number, call: ToolCall, how: How, result: ToolResult, started: number): void {
    const message: ToolMessage = {
      role: "tool",
      toolCallId: call.id,
      name: call.name,
      content: result.content,
      isError: result.isError,
    };
    this.slots[index] = message;
    this.#run.emit({
      type: "tool.finished",
      turn: this.#run.turn,
      call,
      how,
      result,
      durationMs: this.#run.clock() - started,
    });
    this.#flush();
  }

  /** Finishes a call: `tool.result`, then its message (a stop there ends the batch). */
  async finish(index: number, prepared: Settled, result: ToolResult, started: number): Promise<void> {
    const run = this.#run;
    const executed = prepared.kind === "run";
    const dispatched = await run.hooks.toolResult({ call: prepared.call, executed, result }, { signal: run.signal });
    const checked = decided(run, "tool.result", dispatched);
    const how = prepared.kind === "run" ? "executed" : prepared.how;
    if (checked.type === "stop") {
      this.stop = checked;
      this.record(index, prepared.call, how, result, started);
      return;
    }
    if (checked.terminate && !this.terminate) {
      const by = dispatched.records.findLast(
        (r) => r.outcome.type === "decided" && r.outcome.result?.type === "patch" && r.outcome.result.terminate,
      );
      this.terminate = {
        reason: `terminated after \`${prepared.call.name}\``,
        by: by && { hookId: by.hookId, source: by.source },
      };
    }
    this.record(index, prepared.call, how, checked.result, started);
  }

  /** Cancels what a stop, abort or host error left without a result (held calls too), then reports. */
  outcome(calls: readonly ToolCall[]): BatchOutcome {
    const run = this.#run;
    if (this.stop || this.interrupted) {
      const why = run.signal.aborted
        ? "cancelled: the run was aborted before this call finished"
        : this.stop
          ? `cancelled: the run was stopped (${this.stop.reason})`
          : "cancelled: the host failed before this call finished";
      this.pending.length = 0;
      for (const [i, call] of calls.entries())
        if (this.slots[i] === null) this.record(i, call, "cancelled", { content: why, isError: true }, run.clock());
    }
    const { terminate, stop, interrupted } = this;
    if (this.pending.length > 0) {
      const held = { results: [...this.slots], pending: [...this.pending], terminate };
      return { results: [], terminate, stop, interrupted, held };
    }
    return { results: this.slots.filter((m) => m !== null), terminate, stop, interrupted, held: undefined };
  }

  #flush(): void {
    while (this.#flushed < this.slots.length) {
      const message = this.slots[this.#flushed];
      if (message === null || message === undefined) return;
      addMessage(this.#run, message);
      this.#flushed += 1;
    }
  }
}

function firstNull(results: readonly (ToolMessage | null)[]): number {
  const i = results.indexOf(null);
  return i === -1 ? results.length : i;
}

/**
 * Runs one assistant message's tool calls through `tool.invalid`, `tool.call`, the tool and `tool.result`.
 * Sequential by default; `parallel` decides every call first (hooks of a run are serialised anyway), runs
 * the tools concurrently, then checks the results in call order. Never throws: every call gets exactly one
 * tool result, also when a hook stops the run, the signal aborts or the host fails mid-batch, except a call
 * a hook asked about: the batch finishes the others and returns the asked calls `held`.
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
          continue;
        }
        if (one.kind === "answered" && one.terminate && !state.terminate) state.terminate = one.terminate;
        prepared.push({ index, settled: one });
      }
      if (!state.stop) {
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
