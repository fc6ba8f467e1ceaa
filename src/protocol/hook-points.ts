import type { z } from "zod";
import * as events from "./events.js";
import * as results from "./results.js";

/**
 * Every hook point, its handler key in a hook module (the camelCase of the point), its event schema and
 * its result schema. This table is the single source for the SDK types, the bundler's export check, the
 * JSON Schemas for hook authors and the host-side validation of guest output.
 */
export const HOOK_POINTS = {
  "run.start": { handler: "runStart", event: events.RunStartEvent, result: results.RunStartResult },
  "input.inbound": { handler: "inputInbound", event: events.InputInboundEvent, result: results.InputInboundResult },
  "context.prepare": {
    handler: "contextPrepare",
    event: events.ContextPrepareEvent,
    result: results.ContextPrepareResult,
  },
  "tools.prepare": { handler: "toolsPrepare", event: events.ToolsPrepareEvent, result: results.ToolsPrepareResult },
  "model.request": { handler: "modelRequest", event: events.ModelRequestEvent, result: results.ModelRequestResult },
  "model.stream": { handler: "modelStream", event: events.ModelStreamEvent, result: results.ModelStreamResult },
  "model.response": {
    handler: "modelResponse",
    event: events.ModelResponseEvent,
    result: results.ModelResponseResult,
  },
  "tool.invalid": { handler: "toolInvalid", event: events.ToolInvalidEvent, result: results.ToolInvalidResult },
  "tool.call": { handler: "toolCall", event: events.ToolCallEvent, result: results.ToolCallResult },
  "tool.result": { handler: "toolResult", event: events.ToolResultEvent, result: results.ToolResultResult },
  "turn.end": { handler: "turnEnd", event: events.TurnEndEvent, result: results.TurnEndResult },
  "output.validate": {
    handler: "outputValidate",
    event: events.OutputValidateEvent,
    result: results.OutputValidateResult,
  },
  "run.end": { handler: "runEnd", event: events.RunEndEvent, result: results.RunEndResult },
} as const;

export type HookPoint = keyof typeof HOOK_POINTS;
export type HandlerName = (typeof HOOK_POINTS)[HookPoint]["handler"];
export type HookEvent<P extends HookPoint> = z.infer<(typeof HOOK_POINTS)[P]["event"]>;
export type HookResult<P extends HookPoint> = z.infer<(typeof HOOK_POINTS)[P]["result"]>;

export const HOOK_POINT_NAMES = Object.keys(HOOK_POINTS) as HookPoint[];

const POINT_BY_HANDLER = new Map<string, HookPoint>(HOOK_POINT_NAMES.map((p) => [HOOK_POINTS[p].handler, p]));

export function isHookPoint(name: string): name is HookPoint {
  return Object.hasOwn(HOOK_POINTS, name);
}

/** `toolCall` → `tool.call`; undefined for a name that is no handler. */
export function hookPointOfHandler(handler: string): HookPoint | undefined {
  return POINT_BY_HANDLER.get(handler);
}

export function handlerOf(point: HookPoint): HandlerName {
  return HOOK_POINTS[point].handler;
}
