import { access } from "node:fs/promises";
import { resolve } from "node:path";
import { createHookExecutor } from "../../../sandbox/supervisor/index.js";
import {
  declaredTool,
  type LoadedScenario,
  loadScenario,
  ScenarioError,
  scriptedModel,
  type Tool,
  ToolSchemaError,
} from "../../agent/index.js";
import { BundleError } from "../../bundler/index.js";
import { type HookExecutor, type LimitsInput, type Message, RunId } from "../../protocol/index.js";
import {
  bundleFromEntry,
  createHookRuntime,
  fixedBundleSource,
  type HookRuntime,
  type RunAgentResult,
  type RunEvent,
  runTrace,
} from "../../runtime/index.js";
import { type BundleStore, openStore } from "../../store/index.js";
import { printable } from "../../terminal/index.js";
import { CliError, type CliIO, type Command, EXIT, stringFlag, UsageError, writeJson } from "../command.js";
import { eventJson } from "../json-output.js";
import { cliStoreError, isPostgres, storeLocationOf } from "../store-option.js";

const HELP = `Usage: isohook run --scenario <file.json> [--run-id <id>] [--store path] [--json]

Runs one agent session from a scenario file through the real process sandbox: the scripted model's
turns, the declared tools, and the tenant's hooks — the scenario's \`hook\` entry (bundled on the fly,
version \`version\` or 1, config \`config\`) or, without one, the tenant's active bundle in the store.
Prints a trace: every hook call with its point, hook id (tenant and bundle version), what it decided and
how long it took; each model turn and tool result; then how the run ended and the final answer.
Examples are in scenarios/.

Options:
  --scenario <file>  The scenario (JSON): tenant, hook, config, system, input, tools, model.turns, maxTurns
  --run-id <id>      The run's id (default: a fresh run_<uuid>). With a rollout in progress, the run id
                     picks the version, so the same id always gets the same one
  --store <path>     The store for scenarios without \`hook\` (default: ISOHOOK_STORE or .isohook/store.db)
  --json             One JSON event per line (times as ISO strings), ending with {"type": "result",
                     "stopReason", "reason", "warnings", "output", "turns", "usage", "bundle", "transcript"}
  -h, --help         Show this help

Exit codes: 0 the session ran (whatever its hooks decided: completed, stopped, failed or maxTurns), 1 it
could not start or ended in error or aborted, 2 usage.
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
    options: { scenario: { type: "string", short: "s" }, "run-id": { type: "string" }, store: { type: "string" } },
    allowPositionals: false,
    async run(args, io) {
      const file = resolve(io.cwd, stringFlag(args, "scenario", true));
      const runId = stringFlag(args, "run-id");
      if (runId !== undefined && !RunId.safeParse(runId).success)
        throw new UsageError(`Expected --run-id to be 1–128 characters, got \`${runId}\``);
      const loaded = await scenarioOf(file, io.signal);
      const tools = toolsOf(loaded);
      const storePath = loaded.hookEntry === undefined ? storeLocationOf(args, io) : undefined;
      if (storePath !== undefined && !isPostgres(storePath)) await mustExist(storePath, loaded);
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
          if ((await store.active(loaded.scenario.tenant, io.signal)) === undefined) {
            throw new CliError(
              `Tenant ${loaded.scenario.tenant} has no active bundle in ${isPostgres(storePath) ? "the PostgreSQL store" : storePath}. Upload one (isohook upload <entry> --tenant ${loaded.scenario.tenant} --activate) or give the scenario a \`hook\``,
              "no_active_bundle",
            );
          }
        }
        const source =
          loaded.hookEntry === undefined ? undefined : fixedBundleSource([await entryBundle(loaded, executor, io)]);
        const { budgets } = loaded.scenario;
        runtime = await createHookRuntime({
          executor,
          ...(limits ? { limits } : {}),
          ...(budgets ? { dispatch: { budgets } } : {}),
          ...(source ? { bundles: source } : store ? { store } : {}),
        });
        const trace = runTrace();
        const result = await runScenario(
          runtime,
          loaded,
          tools,
          io,
          (event) => {
            if (args.json) writeJson(io, eventJson(event));
            else for (const line of trace(event)) io.stdout(`${line}\n`);
          },
          runId,
        );
        if (args.json) writeJson(io, resultLine(result));
        else io.stdout(`  answer: ${result.output === "" ? "(none)" : printable(result.output)}\n`);
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
    ...(scenario.system !== undefined ? { system: scenario.system } : {}),
    ...(io.signal ? { signal: io.signal } : {}),
    ...(runId !== undefined ? { runId } : {}),
    onEvent,
  });
}

export async function scenarioOf(file: string, signal: AbortSignal | undefined): Promise<LoadedScenario> {
  try {
    return await loadScenario(file, signal);
  } catch (error) {
    if (error instanceof ScenarioError) throw new CliError(error.message, error.code);
    throw error;
  }
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
        "Pass --store, set ISOHOOK_STORE, upload a bundle first (isohook upload), or give the scenario a `hook`",
      "no_store",
    );
  }
}

function resultLine(result: RunAgentResult) {
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
  };
}
