import { ModelError } from "../../agent/index.js";
import { type ProviderSdk, providerSdk } from "./sdk.js";

/**
 * A provider package's failures as `ModelError`s, and its retries: `APICallError`s the provider marks
 * retryable (408, 409, 429, 5xx, connection failures) are tried again with exponential backoff, after the
 * delay the server asked for in `retry-after-ms` or `Retry-After` when it asked for one under a minute.
 */

/** How a model names itself in errors and what to tell the user to check for a refused key. */
export interface ErrorContext {
  /** The provider and model, e.g. `local.chat model m` (an `APICallError` names its URL instead). */
  readonly label: string;
  /** What to check when the provider refuses the credentials. */
  readonly keyHint: string;
}

export interface RetryOptions {
  /** Retries after the first attempt. Default 2. */
  readonly maxRetries: number;
  /** The first backoff delay; each retry doubles it. Default 2,000 ms. */
  readonly retryDelayMs: number;
}

/** Runs `attempt` with the provider's retries; rejects with a `ModelError`, or the abort reason. */
export async function withRetries<T>(
  attempt: () => Promise<T>,
  options: RetryOptions,
  context: ErrorContext,
  signal: AbortSignal,
): Promise<T> {
  const sdk = await providerSdk();
  const { APICallError } = sdk;
  const retry = sdk.retryWithExponentialBackoff({
    maxRetries: options.maxRetries,
    initialDelayInMs: options.retryDelayMs,
    abortSignal: signal,
    shouldRetry: (error) => APICallError.isInstance(error) && error.isRetryable,
    getDelayInMs: ({ error, exponentialBackoffDelay }) => retryAfterMs(sdk, error) ?? exponentialBackoffDelay,
    createRetryError: ({ errors }) => modelErrorOf(sdk, errors.at(-1), context, errors.length),
  });
  try {
    return await retry(attempt);
  } catch (error) {
    if (signal.aborted) throw signal.reason;
    throw modelErrorOf(sdk, error, context, 1);
  }
}

/** The delay a 429 or 503 asked for, when it is a sane one (under a minute). */
function retryAfterMs({ APICallError }: ProviderSdk, error: unknown): number | undefined {
  const headers = APICallError.isInstance(error) ? error.responseHeaders : undefined;
  if (headers === undefined) return undefined;
  const ms = headers["retry-after-ms"];
  const seconds = headers["retry-after"];
  let delay: number | undefined;
  if (ms !== undefined && /^\d+(\.\d+)?$/.test(ms.trim())) delay = Number(ms);
  else if (seconds !== undefined && /^\d+(\.\d+)?$/.test(seconds.trim())) delay = Number(seconds) * 1000;
  else if (seconds !== undefined && !Number.isNaN(Date.parse(seconds))) delay = Date.parse(seconds) - Date.now();
  return delay !== undefined && delay >= 0 && delay < 60_000 ? delay : undefined;
}

/** Any failure of a provider call as the `ModelError` the loop reports; `attempts` counts the tries made. */
export function modelErrorOf(
  { APICallError }: ProviderSdk,
  error: unknown,
  context: ErrorContext,
  attempts: number,
): ModelError {
  if (error instanceof ModelError) return error;
  const tries = attempts > 1 ? ` after ${attempts} attempts` : "";
  if (APICallError.isInstance(error)) {
    const where = error.url;
    const status = error.statusCode;
    const said = detail(error.message);
    if (status === undefined)
      return new ModelError(
        "model_unreachable",
        `Could not reach ${where}${tries}: ${said}. Check the base URL and that the server runs`,
        { cause: error },
      );
    // A body that broke off: the fetch's own TypeError ("terminated") under the provider's wrapper.
    if (status < 400 && error.cause instanceof TypeError)
      return new ModelError(
        "model_unreachable",
        `The connection to ${where} broke off (${detail(innermost(error))}); retry the run`,
        { cause: error },
      );
    if (status < 400)
      return new ModelError(
        "model_malformed_reply",
        `${where} answered HTTP ${status} with something that is no reply (${said}); is the base URL the provider's API?`,
        { status, cause: error },
      );
    if (status === 401 || status === 403)
      return new ModelError(
        "model_auth",
        `${where} refused the credentials (HTTP ${status}): ${said}. Check ${context.keyHint}`,
        { status, cause: error },
      );
    if (status === 429 || status === 408 || status >= 500)
      return new ModelError(
        "model_unavailable",
        `${where} failed (HTTP ${status})${tries}: ${said}. The provider is down, overloaded or rate-limiting; retry later`,
        { status, cause: error },
      );
    return new ModelError(
      "model_rejected",
      `${where} rejected the request (HTTP ${status}): ${said}. Check the model id and the request settings`,
      { status, cause: error },
    );
  }
  const name = error instanceof Error ? error.name : "";
  const message = detail(error instanceof Error ? error.message : String(error));
  // The AI SDK's other errors (AI_JSONParseError, AI_TypeValidationError…) mean a reply it could not read.
  if (name.startsWith("AI_"))
    return new ModelError(
      "model_malformed_reply",
      `${context.label} answered with something the provider package could not read (${name}: ${message}); is the base URL the provider's API?`,
      { cause: error },
    );
  return new ModelError("model_unreachable", `${context.label} failed${tries}: ${message}. Check the provider`, {
    cause: error,
  });
}

/** The message at the bottom of an error's `cause` chain (what actually went wrong). */
export function innermost(error: unknown): string {
  let at: unknown = error;
  for (let depth = 0; depth < 8 && at instanceof Error && at.cause instanceof Error; depth += 1) at = at.cause;
  return at instanceof Error ? at.message : String(at);
}

/** A provider's message on one line, at most 300 characters. */
export function detail(text: string): string {
  const line = text.trim().replace(/\s+/g, " ");
  return line.length > 300 ? `${line.slice(0, 300)}…` : line;
}
