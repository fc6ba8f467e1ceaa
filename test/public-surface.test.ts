/**
 * Each public subpath's names, listed: the root's are capped in test/architecture.test.ts, and every other
 * entry's list is written out here, so a name joins the public surface (a security surface) by an edit to
 * this file or not at all. Types count: a type on a subpath is a promise to its users too.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

/** The names a module file exports, types as `type X`, read from its text (no `export *` is allowed). */
function exportedNames(text: string): string[] {
  const listed = [...text.matchAll(/^export (type )?\{([^}]*)\}/gm)].flatMap((m) =>
    (m[2] ?? "")
      .split(",")
      .map((n) => n.trim())
      .filter((n) => n !== "")
      .map((n) => (m[1] !== undefined || n.startsWith("type ") ? `type ${n.replace(/^type /, "")}` : n)),
  );
  const declared = [...text.matchAll(/^export (?:async )?(const|function|class|interface|type) (\w+)/gm)].map((m) =>
    m[1] === "interface" || m[1] === "type" ? `type ${m[2]}` : (m[2] ?? ""),
  );
  return [...listed, ...declared].sort();
}

/**
 * What each subpath is for decides what it holds. `loop`: what a platform that brings its own agent loop
 * (or runs isohook's loop itself) needs to dispatch hooks and read their decisions and events; `sandbox`:
 * the executor and the one typed call on their own; `admin`: the CLI's work as functions; `schemas`: JSON
 * Schema only; `testing`: a hook project's tests; `ai-sdk`: the Vercel AI SDK adapter on a HookRun;
 * `hook-sdk`: what a hook module imports.
 */
const SURFACE: Record<string, { file: string; names: readonly string[] }> = {
  "isohook/loop": {
    file: "src/loop.ts",
    names: [
      // The agent loop, when isohook's own runs the turns.
      "DEFAULT_MAX_TURNS",
      "DEFAULT_STREAM_WINDOW",
      "Inbox",
      "type ModelDelta",
      "type ModelStreamPart",
      "type StreamWindow",
      "resumeAgentLoop",
      "runAgentLoop",
      "type AgentEvent",
      "type AgentLoopOptions",
      "type AgentLoopResult",
      "type HooksDecidedEvent",
      "type StopReason",
      // A run of the platform's own loop: runtime.openRun() gives a HookRun that dispatches one point at a time.
      "type DispatchOptions",
      "type HookPoint",
      "type HookRun",
      "type OpenHookRunOptions",
      "type PointDecision",
      "type RunWarning",
      // The dispatcher and one run's dispatch, for a host that wires its own executor.
      "DEFAULT_POLICY",
      "createDispatcher",
      "type DecidedBy",
      "type DecisionEntry",
      "type DecisionSink",
      "type DispatchEvent",
      "type Dispatched",
      "type Dispatcher",
      "type DispatcherOptionsInput",
      "type FailurePolicy",
      "type HookCalledEvent",
      "type HookShadowedEvent",
      "type HookSource",
      "type OpenRunOptions",
      "type PlatformHandler",
      "type PlatformHandlers",
      "type PlatformHookContext",
      "type PolicyMap",
      "type QuarantineEnteredEvent",
      "type QuarantineExitedEvent",
      "type RunDispatcher",
      "type RunSnapshot",
      "type ToolCallDecision",
      // The shapes a hook point's event is made of.
      "type HookContext",
      "type HookEvent",
      "type HookResult",
      "type Message",
      "type ToolCall",
      "type ToolResult",
      "type ToolSpec",
      "type Usage",
      // Approvals: a run paused by an ask, sealed as a checkpoint, resumed.
      "CHECKPOINT_VERSION",
      "openCheckpoint",
      "type ApprovalDecisions",
      "type Checkpoint",
      "type CheckpointBody",
      "type CheckpointKey",
      "type PausedBatch",
      "type PausedRun",
      "type PendingApproval",
      "type ResumeAgentOptions",
      "type RunStartedEvent",
      "type RuntimeEvent",
    ],
  },
  "isohook/sandbox": {
    file: "src/sandbox.ts",
    names: [
      "DEFAULT_LIMITS",
      "ExecutorClosedError",
      "ExecutorOptionsError",
      "SandboxStartError",
      "createHookExecutor",
      "invokeHook",
      "type DescribeOutcome",
      "type ExecutorOptions",
      "type Failure",
      "type HookExecutor",
      "type HookOutcome",
      "type InvokedHook",
      "type Limits",
      "type LimitsInput",
      "type SandboxBundle",
      "type SandboxCall",
      "type SandboxCost",
      "type SandboxResult",
      "type SupervisorEvent",
      "type WorkerExitReason",
    ],
  },
  "isohook/admin": {
    file: "src/admin.ts",
    names: [
      // Bundle, describe, fixtures, deploy gate.
      "BundleError",
      "buildBundle",
      "compileHook",
      "deployHook",
      "describeBundle",
      "parseFixtures",
      "runDeployGate",
      "runFixtures",
      "type ActiveBundle",
      "type CompiledHook",
      "type BundleErrorCode",
      "type BundleManifest",
      "type BundleSource",
      "type DeployResult",
      "type Fixture",
      "type FixtureReport",
      "type GateReport",
      "type HookBundle",
      // The decision log, replay and the comparison of two versions.
      "DecisionLog",
      "compareDecisions",
      "formatComparison",
      "replayDecisions",
      "replayRecordOf",
      "viewOf",
      "type ComparisonReport",
      "type DecisionLogStats",
      "type DecisionPair",
      "type DecisionView",
      "type LogOptions",
      "type ReplayRecord",
      // The store classes (the root's openStore picks one by location).
      "PostgresBundleStore",
      "SqliteBundleStore",
      "type DecisionLogStore",
      "type LogSettings",
      "type PostgresStoreOptions",
      "type StoreErrorCode",
      "type StoreEvent",
      "type StoredBundle",
    ],
  },
  "isohook/schemas": {
    file: "src/schemas.ts",
    names: ["SCHEMA_NAMES", "hookSchema", "jsonSchema", "type JsonSchema", "type SchemaName"],
  },
  "isohook/mcp": {
    file: "src/mcp.ts",
    names: [
      "listenMcpHttp",
      "McpGatewayError",
      "openMcpSession",
      "parseUpstream",
      "readTokenFile",
      "serveMcpStdio",
      "tokensOf",
      "type Authenticate",
      "type McpGatewayOptions",
      "type McpHttpGateway",
      "type McpHttpOptions",
      "type McpSession",
      "type McpStdioOptions",
      "type TokenFile",
      "type Upstream",
      "type UpstreamSpec",
    ],
  },
  "isohook/testing": {
    file: "src/testing.ts",
    names: [
      "testHook",
      "type BundleManifest",
      "type FixtureCtx",
      "type FixtureReport",
      "type HookOutcome",
      "type HookPoint",
      "type HookUnderTest",
      "type LimitsInput",
      "type TestHookOptions",
    ],
  },
  "isohook/ai-sdk": {
    file: "src/adapters/ai-sdk/index.ts",
    names: [
      // Hooks over the SDK's own loop.
      "guardAiSdk",
      "ToolRefusedError",
      "type AiSdkGuard",
      "type GuardOptions",
      "type Halt",
      // Any AI SDK language model in isohook's loop.
      "aiSdkModel",
      "type AiSdkModelOptions",
      "type OpenAIModelOptions",
    ],
  },
  "isohook/hook-sdk": {
    file: "sandbox/guest/hook-sdk.ts",
    names: [
      "defineHooks",
      "type DefinedHooks",
      "type Handler",
      "type HandlerOf",
      "type HookContext",
      "type HookEvent",
      "type HookPoint",
      "type HookReturn",
      "type Hooks",
      "type Matched",
      "type ObserveHandler",
      "type ToolPoint",
    ],
  },
};

describe("the public subpaths", () => {
  it("covers every subpath of package.json but the root", async () => {
    const pkg = JSON.parse(await readFile(join(ROOT, "package.json"), "utf8")) as { exports: Record<string, unknown> };
    const subpaths = Object.keys(pkg.exports)
      .filter((p) => p !== "." && !p.endsWith(".json"))
      .map((p) => p.replace(/^\./, "isohook"));
    expect(subpaths.sort()).toEqual(Object.keys(SURFACE).sort());
  });

  for (const [subpath, { file, names }] of Object.entries(SURFACE)) {
    it(`${subpath} exports exactly its listed names`, async () => {
      const text = await readFile(join(ROOT, file), "utf8");
      expect(text).not.toMatch(/^export \*/m);
      expect(exportedNames(text)).toEqual([...names].sort());
    });
  }

  it("loads exactly the listed values of each host subpath", async () => {
    const loaded: Record<string, Record<string, unknown>> = {
      "isohook/loop": await import("../src/loop.js"),
      "isohook/sandbox": await import("../src/sandbox.js"),
      "isohook/admin": await import("../src/admin.js"),
      "isohook/schemas": await import("../src/schemas.js"),
      "isohook/testing": await import("../src/testing.js"),
      "isohook/ai-sdk": await import("../src/adapters/ai-sdk/index.js"),
    };
    for (const [subpath, module] of Object.entries(loaded)) {
      const values = (SURFACE[subpath]?.names ?? []).filter((n) => !n.startsWith("type "));
      expect(Object.keys(module).sort(), subpath).toEqual([...values].sort());
    }
  });
});
