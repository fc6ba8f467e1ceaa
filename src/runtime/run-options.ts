import type { AgentLoopOptions } from "../agent/index.js";
import { RUN_ID_RULE, RunId, type TenantId } from "../protocol/index.js";
import { RuntimeError } from "./errors.js";
import type { RunWarning } from "./events.js";
import type { RunAgentOptions } from "./session.js";

export function noBundleWarning(tenantId: TenantId, hasSource: boolean): RunWarning {
  const why = hasSource
    ? `tenant ${tenantId} has no active bundle`
    : "the runtime has no bundle source (pass `store` or `bundles` to createHookRuntime)";
  return { code: "no_active_bundle", message: `No tenant hooks guard this run: ${why}; only platform hooks run.` };
}

/** The run's own fields that the loop trusts: a wrong one is the caller's mistake, named. */
export function checkRun(run: Pick<RunAgentOptions, "maxTurns" | "runId" | "tools">): void {
  const { maxTurns, runId, tools } = run;
  if (maxTurns !== undefined && !(Number.isInteger(maxTurns) && maxTurns >= 1)) {
    throw new RuntimeError(
      "invalid_run",
      `Expected \`maxTurns\` to be an integer from 1 and up, got \`${String(maxTurns)}\``,
    );
  }
  if (runId !== undefined && !RunId.safeParse(runId).success) {
    throw new RuntimeError("invalid_run", `Expected \`runId\` to be ${RUN_ID_RULE}, got ${JSON.stringify(runId)}`);
  }
  const names = new Set<string>();
  for (const tool of tools ?? []) {
    if (names.has(tool.spec.name)) {
      throw new RuntimeError("invalid_run", `Two tools are named \`${tool.spec.name}\`; give each tool its own name`);
    }
    names.add(tool.spec.name);
  }
}

export function loopFields(run: RunAgentOptions): Omit<AgentLoopOptions, "hooks" | "model"> {
  const { input, tools, system, settings, maxTurns, parallelToolCalls, steering, followUp, inbox, streamWindow } = run;
  return {
    input,
    ...(tools !== undefined ? { tools } : {}),
    ...(system !== undefined ? { system } : {}),
    ...(settings !== undefined ? { settings } : {}),
    ...(maxTurns !== undefined ? { maxTurns } : {}),
    ...(parallelToolCalls !== undefined ? { parallelToolCalls } : {}),
    ...(steering !== undefined ? { steering } : {}),
    ...(followUp !== undefined ? { followUp } : {}),
    ...(inbox !== undefined ? { inbox } : {}),
    ...(streamWindow !== undefined ? { streamWindow } : {}),
  };
}
