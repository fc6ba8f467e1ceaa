import { access } from "node:fs/promises";
import { createHookExecutor } from "../../../sandbox/supervisor/index.js";
import {
  declaredTool,
  type LoadedScenario,
  scenarioInbox,
  scriptedModel,
  type Tool,
  ToolSchemaError,
} from "../../agent/index.js";
import { BundleError } from "../../bundler/index.js";
import { type HookExecutor, type LimitsInput, type Message, RUN_ID_RULE, RunId } from "../../protocol/index.js";
import {
  bundleFromEntry,
  createHookRuntime,
  fixedBundleSource,
  type HookRuntime,
  type RunAgentResult,
  type RunEvent,
  runTrace,
} from "../../runtime/index.js";
import { type BundleStore, openStore, storeLocation } from "../../store/index.js";
import { line } from "../../terminal/index.js";
import { CliError, type CliIO, type Command, EXIT, stringFlag, UsageError, writeJson } from "../command.js";
import { eventJson } from "../json-output-events.js";
import { streamingTrace } from "../stream-text.js";
import {
  approvalOptions,
  reportPaused,
  resumeScenario,
  runtimeCall,
  type ScenarioApproval,
  scenarioOf,
  startOf,
} from "./run-approval.js";
import { refuseUnkeptPause } from "./run-pause-check.js";

export { scenarioOf };

import { cliStoreError, STORE_HELP, storeLocationOf } from "../store-option.js";

const HELP = `Usage: isohook run --scenario <file.json> [--run-id <id>] [--checkpoint <out.json>] [--checkpoint-ttl <age>] [--store path] [--json]
       isohook run --resume <checkpoint.json> (--approve <callId> | --reject <callId> [--reason <text>] | --edit <callId>=<json>)…

Runs one agent session from a scenario file through the real process sandbox: the scripted model's
turns, the declared tools, and the tenant's hooks — the scenario's \`hook\` entry (bundled on the fly,
version \`version\` or 1, config \`config\`) or, without one, the tenant's active bundle in the store.
Prints a trace: every hook call with its point, hook id (tenant and bundle version), what it decided and
how long it took; each model turn and tool result; then how the run ended and the final answer.
Examples are in scenarios/.

When a hook asks for approval (\`{type: "ask"}\` at tool.call) and the scenario's \`approvals\` do not
answer every held call, the run ends with stop reason \`approval\`: the held calls are printed and the run
is sealed into a checkpoint (HMAC-SHA256 with ISOHOOK_CHECKPOINT_KEY). \`--resume\` continues it, in this
or another process, with one decision per held call; the scenario is read again from where the first
run read it and must be unchanged. A checkpoint resumes once: the store records its id (also when the
scenario has a \`hook\`, if --store or ISOHOOK_STORE names a store), so a second resume from any process
on the same store is refused; it expires after --checkpoint-ttl (default 7d).

Options:
  --scenario <file>    The scenario (JSON): tenant, hook, config, system, input, tools, model.turns,
                       maxTurns, approvals
  --run-id <id>        The run's id (default: a fresh run_<uuid>). With a rollout in progress, the run
                       id picks the version, so the same id always gets the same one
  --checkpoint <file>  Where to write the checkpoint when the run pauses for approval (default in text
                       mode: <runId>.checkpoint.json here; with --json: in the result line)
  --checkpoint-ttl <age>
                       How long the checkpoint can be resumed: 90s, 30m, 12h, 7d (default 7d)
  --resume <file>      Continue a paused run: a checkpoint file, or what \`run --json\` printed (all of it,
                       or its result line)
  --approve <callId>   Run the held call with its arguments (repeatable)
  --reject <callId>    Answer the held call with the error result "rejected: <reason>" (repeatable)
  --reason <text>      The reason given with --reject (default "rejected by the operator")
  --edit <id>=<json>   Run the held call with these arguments instead, through the tool.call hooks again
${STORE_HELP}
  --json               One JSON event per line (times as ISO strings), ending with {"type": "result",
                       "stopReason", "reason", "warnings", "output", "turns", "usage", "bundle",
                       "transcript"}, and "pending" and "checkpoint" when the run paused for approval
  -h, --help           Show this help

Environment:
  ISOHOOK_CHECKPOINT_KEY  The checkpoint key (at least 16 bytes): needed when a run pauses, and to
                          resume. Missing, a run whose hook can ask is refused before it starts, and
                          one that asks anyway stops at the ask, no tool run after it (usage errors)
  ISOHOOK_CHECKPOINT_PREVIOUS_KEY
                          While rotating keys: the key before it, which still opens checkpoints
                          sealed with it (new ones are sealed with ISOHOOK_CHECKPOINT_KEY)

Exit codes: 0 the session ran (whatever its hooks decided: completed, stopped, failed, maxTurns or
approval), 1 it could not start or ended in error or aborted, or the checkpoint was refused (changed,
sealed with another key, another format version, its scenario changed, expired, resumed already), 2 usage.
`;

/** What the command needs from outside; tests pass a shared executor. */
export interface RunCommandDeps {
  /** Opens the sandbox for one session; the command closes it. */
  readonly openExecutor: (options: { limits?: LimitsInput; signal?: AbortSignal }) => Promise<HookExecutor>;
}

const defaultDeps: RunCommandDeps = {
  openExecutor: (options) => createHookExecutor({ ...options, workers: 1, spareWorker: false }),
};

export function createRunCommand(deps: RunCommandDeps = defaultDeps): Command {
  return {
    name: "run",
    summary: "Run an agent session from a scenario file and print what the hooks decided",
    help: HELP,
    options: {
      scenario: { type: "string", short: "s" },
      "run-id": { type: "string" },
      store: { type: "string" },
      checkpoint: { type: "string" },
      "checkpoint-ttl": { type: "string" },
      resume: { type: "string" },
      approve: { type: "string", multiple: true },
      reject: { type: "string", multiple: true },
      reason: { type: "string" },
      edit: { type: "string", multiple: true },
    },
    allowPositionals: false,
    async run(args, io) {
      const start = await startOf(args, io);
      const { loaded, resume } = start;
      const runId = stringFlag(args, "run-id");
      if (runId !== undefined && resume !== undefined)
        throw new UsageError("--run-id names a new run; a resumed run keeps the id it was checkpointed with");
      if (runId !== undefined && !RunId.safeParse(runId).success)
        throw new UsageError(`Expected --run-id to be ${RUN_ID_RULE}, got ${JSON.stringify(runId)}`);
      const tools = toolsOf(loaded);
      // A resume records its checkpoint in the store: with a scenario `hook`, in the store named explicitly.
      const named = args.values.store !== undefined || io.env.ISOHOOK_STORE !== undefined;
      const storePath =
        loaded.hookEntry === undefined || (resume !== undefined && named) ? storeLocationOf(args, io) : undefined;
      const storeFile = storePath === undefined ? undefined : storeLocation(storePath).file;
      if (storeFile !== undefined && loaded.hookEntry === undefined) await mustExist(storeFile, loaded);
      const limits = loaded.scenario.limits;
      const executor = await deps.openExecutor({
        ...(limits ? { limits } : {}),
        ...(io.signal ? { signal: io.signal } : {}),
      });
      let store: BundleStore | undefined;
      let runtime: HookRuntime | undefined;
      try {
        if (storePath !== undefined) {
          store = await openStore(storePath, { create: false }).catch((error: unknown) => {
            throw cliStoreError(error);
          });
          const served = loaded.hookEntry === undefined && resume === undefined;
          if (served && (await store.active(loaded.scenario.tenant, io.signal)) === undefined) {
            throw new CliError(
              `Tenant ${loaded.scenario.tenant} has no active bundle in ${storeLocation(storePath).label}. Upload one (isohook upload <entry> --tenant ${loaded.scenario.tenant} --activate) or give the scenario a \`hook\``,
              "no_active_bundle",
            );
          }
        }
        const entry = loaded.hookEntry === undefined ? undefined : await entryBundle(loaded, executor, io);
        const deciding =
          entry ?? (resume === undefined ? await store?.active(loaded.scenario.tenant, io.signal) : undefined);
        if (deciding !== undefined && resume === undefined)
          refuseUnkeptPause(loaded, deciding, start.approval?.key !== undefined);
        const source = entry === undefined ? undefined : fixedBundleSource([entry]);
        const { budgets } = loaded.scenario;
        runtime = await createHookRuntime({
          executor,
          ...(limits ? { limits } : {}),
          ...(budgets ? { dispatch: { budgets } } : {}),
          ...(source
            ? { bundles: source, ...(store ? { checkpoints: store.checkpoints } : {}) }
            : store
              ? { store }
              : {}),
        });
        const trace = streamingTrace(runTrace());
        const onEvent = (event: RunEvent) => {
          if (args.json) writeJson(io, eventJson(event));
          else {
            const text = trace(event);
            if (text !== undefined) io.stdout(text);
          }
        };
        const result = await runtimeCall(() =>
          resume === undefined
            ? runScenario(runtime as HookRuntime, loaded, tools, io, onEvent, runId, start.approval)
            : resumeScenario(runtime as HookRuntime, loaded, tools, io, onEvent, resume, start.approval),
        );
        // The run did not wait for its observe-only hooks; their records come before the result line.
        await runtime.observersSettled();
        await reportPaused(result, args, io);
        if (args.json) writeJson(io, resultLine(result));
        else if (result.checkpoint === undefined)
          io.stdout(line`  answer: ${result.output === "" ? "(none)" : result.output}\n`);
        return result.stopReason === "error" || result.stopReason === "aborted" ? EXIT.failed : EXIT.ok;
      } finally {
        await runtime?.close();
        await store?.close();
        await executor.close();
      }
    },
  };
}

export const runCommand = createRunCommand();

/** Runs a loaded scenario on a runtime: its tools, its scripted model, its input and follow-ups. */
export function runScenario(
  runtime: HookRuntime,
  loaded: LoadedScenario,
  tools: readonly Tool[],
  io: Pick<CliIO, "signal">,
  onEvent: (event: RunEvent) => void,
  runId?: string,
  approval?: ScenarioApproval,
): Promise<RunAgentResult> {
  const { scenario } = loaded;
  const followUp: Message[][] = scenario.followUp.map((content) => [{ role: "user", content }]);
  return runtime.runAgent({
    tenantId: scenario.tenant,
    input: scenario.input,
    tools,
    model: scriptedModel(scenario.model.turns, scenario.model.id ? { id: scenario.model.id } : {}),
    maxTurns: scenario.maxTurns,
    parallelToolCalls: scenario.parallelToolCalls,
    followUp: () => followUp.shift() ?? [],
    inbox: scenarioInbox(scenario),
    ...(scenario.system !== undefined ? { system: scenario.system } : {}),
    ...(io.signal ? { signal: io.signal } : {}),
    ...(runId !== undefined ? { runId } : {}),
    ...approvalOptions(loaded, approval),
    onEvent,
  });
}

export function toolsOf(loaded: LoadedScenario): Tool[] {
  return loaded.scenario.tools.map((declaration, i) => {
    try {
      return declaredTool(declaration);
    } catch (error) {
      if (error instanceof ToolSchemaError) {
        throw new CliError(`${loaded.file}: \`tools[${i}].parameters\`: ${error.message}`, "invalid_scenario");
      }
      throw error;
    }
  });
}

async function entryBundle(loaded: LoadedScenario, executor: HookExecutor, io: CliIO) {
  const { scenario } = loaded;
  try {
    return await bundleFromEntry(loaded.hookEntry ?? "", {
      tenantId: scenario.tenant,
      executor,
      ...(scenario.version !== undefined ? { version: scenario.version } : {}),
      ...(loaded.hookRoot !== undefined ? { root: loaded.hookRoot } : {}),
      ...(scenario.config !== undefined ? { config: scenario.config } : {}),
      ...(io.signal ? { signal: io.signal } : {}),
    });
  } catch (error) {
    if (!(error instanceof BundleError)) throw error;
    throw new CliError(`The scenario's hook ${scenario.hook}: ${error.message}`, error.code);
  }
}

async function mustExist(path: string, loaded: LoadedScenario): Promise<void> {
  try {
    await access(path);
  } catch {
    throw new CliError(
      `${loaded.file} has no \`hook\`, so the tenant's active bundle comes from the store, but there is no store at ${path}. ` +
        "Pass --store or set ISOHOOK_STORE to your store, create one (isohook migrate, then isohook upload), or give the scenario a `hook`",
      "no_store",
    );
  }
}

function resultLine(result: RunAgentResult) {
  const paused =
    result.checkpoint === undefined ? {} : { pending: result.pending ?? [], checkpoint: result.checkpoint };
  return {
    type: "result",
    runId: result.runId,
    tenantId: result.tenantId,
    bundle: result.bundle ?? null,
    stopReason: result.stopReason,
    reason: result.reason ?? null,
    decidedBy: result.decidedBy ?? null,
    error: result.error ?? null,
    warnings: result.warnings,
    output: result.output,
    turns: result.turns,
    usage: result.usage,
    transcript: result.transcript,
    ...paused,
  };
}
