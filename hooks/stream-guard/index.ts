import { defineHooks } from "isohook/hook-sdk";

/** What a leaked credential looks like in streamed text or tool arguments. */
const SECRET = /\b(?:sk-[A-Za-z0-9]{16,}|AKIA[0-9A-Z]{16})|-----BEGIN [A-Z ]*PRIVATE KEY-----/;

/**
 * Watches the model's output as it streams and stops the run the moment a credential appears in the text,
 * the reasoning or a tool call's arguments, so the rest never reaches the user; counts the windows it saw.
 */
export default defineHooks({
  modelStream(event, ctx) {
    ctx.state.windows = (typeof ctx.state.windows === "number" ? ctx.state.windows : 0) + 1;
    if (SECRET.test(event.aggregated)) return { type: "stop", reason: `credential in the model's ${event.kind}` };
    return undefined;
  },
});
