import { z } from "zod";
import { BundleRef } from "./bundle-ref.js";
import { HookId, RunId, TenantId } from "./ids.js";
import { JsonObject, JsonValue } from "./json.js";

/** The `ctx` a handler receives beside the event. `state` is run-scoped scratch the hook may mutate. */
export const HookContext = z.strictObject({
  tenantId: TenantId,
  runId: RunId,
  turn: z.number().int().nonnegative(),
  hookId: HookId,
  bundle: BundleRef,
  config: JsonValue,
  state: JsonObject,
});
export type HookContext = z.infer<typeof HookContext>;
