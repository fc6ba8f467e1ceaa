import { defineHooks } from "isohook/hook-sdk";
import blockDestructiveShell from "../block-destructive-shell/index.js";
import redactSecrets from "../redact-secrets/index.js";
import safeWorkdir from "../safe-workdir/index.js";

/**
 * A tenant policy for a coding agent, composed from three example hooks into one bundle: destructive shell
 * commands are blocked, the rest run inside the workdir (`config.workdir`), and secrets are redacted from
 * tool results. Within one point the first hook that decides wins.
 */
export default defineHooks({
  async toolCall(event, ctx) {
    return (await blockDestructiveShell.toolCall?.(event, ctx)) ?? (await safeWorkdir.toolCall?.(event, ctx));
  },
  toolResult(event, ctx) {
    return redactSecrets.toolResult?.(event, ctx);
  },
});
