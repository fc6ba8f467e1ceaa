import type { HookExecutor } from "../protocol/index.js";

/**
 * A HookExecutor that opens the real one on first use, so a command that checks a tenant's folder first
 * (the deploy gate reads every file before it needs the sandbox) starts no worker for a folder it refuses.
 * `close()` closes it if it was opened.
 */
export function lazyExecutor(open: () => Promise<HookExecutor>, mode: HookExecutor["mode"] = "process"): HookExecutor {
  let opened: Promise<HookExecutor> | undefined;
  const executor = () => {
    opened ??= open();
    return opened;
  };
  return {
    mode,
    execute: async (call, signal) => (await executor()).execute(call, signal),
    describe: async (tenantId, bundle, signal) => (await executor()).describe(tenantId, bundle, signal),
    close: async () => {
      if (opened === undefined) return;
      await (await opened.catch(() => undefined))?.close();
    },
  };
}
