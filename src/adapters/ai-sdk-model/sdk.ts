import type { APICallError } from "@ai-sdk/provider";
import type { retryWithExponentialBackoff } from "@ai-sdk/provider-utils";
import { ModelError } from "../../agent/index.js";

/**
 * The AI SDK's provider packages, loaded on a model's first call rather than when `isohook` is imported
 * (about 60 ms): an app that never calls an AI SDK model never loads them. They are dependencies; one that
 * is missing anyway (a pruned install) is a `model_config` error that says what to install.
 */
export interface ProviderSdk {
  readonly APICallError: typeof APICallError;
  readonly retryWithExponentialBackoff: typeof retryWithExponentialBackoff;
}

let loading: Promise<ProviderSdk> | undefined;

export function providerSdk(): Promise<ProviderSdk> {
  loading ??= Promise.all([import("@ai-sdk/provider"), import("@ai-sdk/provider-utils")]).then(
    ([provider, utils]) => ({
      APICallError: provider.APICallError,
      retryWithExponentialBackoff: utils.retryWithExponentialBackoff,
    }),
    (error: unknown) => {
      loading = undefined;
      throw missing("@ai-sdk/provider@4 @ai-sdk/provider-utils@5", error);
    },
  );
  return loading;
}

/** The error for a provider package that is not installed (or failed to load). */
export function missing(packages: string, cause: unknown): ModelError {
  const why = cause instanceof Error ? cause.message.split("\n")[0] : String(cause);
  return new ModelError(
    "model_config",
    `AI SDK models need ${packages}, which did not load (${why}). Install them: npm install ${packages}`,
    { cause },
  );
}
