import { z } from "zod";
import { BundleHash, HookId, RunId, TenantId } from "./ids.js";
import { JsonObject, JsonValue } from "./json.js";

/** The `ctx` a handler receives beside the event. `state` is run-scoped scratch the hook may mutate. */
export const HookContext = z.strictObject({
  tenantId: TenantId,
  runId: RunId,
  turn: z.number().int().nonnegative(),
  hookId: HookId,
  bundle: z.strictObject({ version: z.number().int().nonnegative(), hash: BundleHash }),
  config: JsonValue,
  state: JsonObject,
});
export type HookContext = z.infer<typeof HookContext>;
