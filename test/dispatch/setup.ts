import {
  createDispatcher,
  type DispatchEvent,
  type DispatcherOptionsInput,
  type PlatformHandlers,
  type PolicyMap,
} from "../../src/dispatch/index.js";
import type { HookPoint } from "../../src/protocol/index.js";
import { bundleOf, FakeClock, FakeExecutor, type Respond, RUN, returned, TENANT } from "./helpers.js";

export interface StackSetup {
  /** Points the tenant bundle exports; undefined = no tenant bundle. */
  readonly points?: HookPoint[];
  readonly respond?: Respond;
  readonly first?: PlatformHandlers[];
  readonly last?: PlatformHandlers[];
  readonly policy?: PolicyMap;
  readonly options?: Omit<DispatcherOptionsInput, "executor">;
}

/** A dispatcher with a fake executor, a fake clock, platform hooks `first:0…`/`last:0…` and one open run. */
export function setup(spec: StackSetup = {}) {
  const clock = new FakeClock();
  const events: DispatchEvent[] = [];
  const executor = new FakeExecutor(spec.respond ?? (() => returned(undefined)));
  const dispatcher = createDispatcher({ executor, clock: clock.read, emit: (e) => events.push(e), ...spec.options });
  for (const [i, hooks] of (spec.first ?? []).entries()) {
    dispatcher.registerPlatformHooks({ id: `first:${i}`, position: "first", hooks });
  }
  for (const [i, hooks] of (spec.last ?? []).entries()) {
    dispatcher.registerPlatformHooks({ id: `last:${i}`, position: "last", hooks });
  }
  const bundle = spec.points === undefined ? undefined : bundleOf(spec.points);
  const run = dispatcher.openRun({ tenantId: TENANT, runId: RUN, bundle, policy: spec.policy });
  return { clock, events, executor, dispatcher, run, bundle };
}
