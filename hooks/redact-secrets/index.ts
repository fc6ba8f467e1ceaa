import { defineHooks } from "isohook/hook-sdk";

const REDACTED = "[REDACTED]";

/** Credentials that must not reach the model, in the order they are replaced. */
const SECRETS: readonly RegExp[] = [
  // OpenAI / Anthropic style API keys: sk-…, sk-proj-…, sk-ant-…
  /\bsk-[A-Za-z0-9_-]{16,}/g,
  // GitHub tokens: personal, OAuth, user-to-server, server-to-server, refresh; fine-grained PATs.
  /\bgh[pousr]_[A-Za-z0-9]{30,}/g,
  /\bgithub_pat_[A-Za-z0-9_]{22,}/g,
  // AWS access key ids (long-term and temporary).
  /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g,
  // Slack tokens.
  /\bxox[abprs]-[A-Za-z0-9-]{10,}/g,
];

/** `Bearer <token>` keeps its scheme word so the text still reads as an auth header. */
const BEARER = /\b(Bearer\s+)[A-Za-z0-9._~+/-]{8,}=*/gi;

function redact(text: string): string {
  let redacted = text.replace(BEARER, `$1${REDACTED}`);
  for (const secret of SECRETS) redacted = redacted.replace(secret, REDACTED);
  return redacted;
}

/** Replaces API keys and tokens in every tool result's content with `[REDACTED]` before the model sees it. */
export default defineHooks({
  toolResult(event) {
    const content = redact(event.result.content);
    if (content === event.result.content) return undefined;
    return { type: "patch", content };
  },
});
