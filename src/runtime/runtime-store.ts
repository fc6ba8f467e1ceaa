import { notify } from "../protocol/index.js";
import { type BundleStore, openStore, StoreError, storeLocation } from "../store/index.js";
import { RuntimeError } from "./errors.js";
import type { HookRuntimeOptions } from "./options.js";

/** Opens the store at a location; a missing one is refused unless `createStore` (a typo must not run every tenant unguarded). */
export async function openRuntimeStore(location: string, options: HookRuntimeOptions): Promise<BundleStore> {
  try {
    return await openStore(location, {
      create: options.createStore === true,
      onEvent: (event) => notify(options.onEvent, event),
    });
  } catch (error) {
    if (!(error instanceof StoreError) || error.code !== "missing") throw error;
    throw new RuntimeError(
      "invalid_options",
      `No store at ${storeLocation(location).label}: pass the location of an existing store, \`createStore: true\` to create an empty one, or create it first with \`isohook migrate --store …\``,
    );
  }
}
