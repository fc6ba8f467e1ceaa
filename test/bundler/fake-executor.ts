import type { DescribeOutcome, HookExecutor, SandboxBundle, TenantId } from "../../src/protocol/index.js";

/** A HookExecutor whose `describe` answers with a fixed outcome and records what it was asked. */
export function fakeExecutor(outcome: DescribeOutcome): HookExecutor & {
  readonly described: { tenantId: TenantId; bundle: SandboxBundle; signal: AbortSignal | undefined }[];
  closed: boolean;
} {
  const described: { tenantId: TenantId; bundle: SandboxBundle; signal: AbortSignal | undefined }[] = [];
  return {
    mode: "inline",
    described,
    closed: false,
    execute: () => Promise.reject(new Error("fake executor: execute is not used by the bundler")),
    describe(tenantId, bundle, signal) {
      described.push({ tenantId, bundle, signal });
      return Promise.resolve(outcome);
    },
    close() {
      this.closed = true;
      return Promise.resolve();
    },
  };
}

export function described(handlers: string[]): DescribeOutcome {
  return { type: "described", handlers, cpuMs: 1, runMs: 2 };
}
