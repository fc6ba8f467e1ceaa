import { defineHooks } from "isohook/hook-sdk";

/**
 * Written to misbehave, to show containment. Its `tool.call` waits for a flag that never comes on
 * arguments it did not expect (anything mentioning "spin"): an infinite loop. In isohook the sandbox stops
 * it at the per-call timeout, the failure policy (`tool.call` fails closed) blocks the call, and after
 * repeated timeouts the bundle is quarantined — while other tenants' hooks keep running.
 */
export default defineHooks({
  toolCall(event) {
    if (!JSON.stringify(event.call.args).includes("spin")) return undefined;
    let ready = false;
    while (!ready) {
      ready = Math.random() > 2;
    }
    return { type: "block", reason: "unreachable" };
  },
});
