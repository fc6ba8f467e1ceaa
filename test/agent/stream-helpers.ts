import { createDispatcher, type PlatformHooks } from "../../src/dispatch/index.js";
import { type HookEvent, type HookExecutor, RunId, TenantId } from "../../src/protocol/index.js";

/** The streaming tests' run: the real dispatcher with trusted platform hooks only (no tenant bundle). */

const unused: HookExecutor = {
  mode: "inline",
  execute: () => Promise.reject(new Error("no tenant bundle in these tests")),
  describe: () => Promise.reject(new Error("no tenant bundle in these tests")),
  close: () => Promise.resolve(),
};

export function runScope(hooks: PlatformHooks[]) {
  const dispatcher = createDispatcher({ executor: unused });
  dispatcher.registerPlatformHooks(hooks);
  return dispatcher.openRun({ tenantId: TenantId.parse("acme"), runId: RunId.parse("run-1") });
}

type Window = HookEvent<"model.stream">;

/** A `model.stream` hook that keeps each window it sees and stops the run when `stopWhen` says so. */
export function watcher(windows: Window[], stopWhen?: (w: Window) => boolean): PlatformHooks {
  return {
    id: "watch",
    position: "first",
    hooks: {
      modelStream: (event) => {
        windows.push(structuredClone(event));
        return stopWhen?.(event) === true ? { type: "stop", reason: "secret leaked" } : undefined;
      },
    },
  };
}
