import { CheckedStore, type CheckedStoreOptions } from "../checked-store.js";
import { MemoryDriver } from "./memory-driver.js";

export type MemoryStoreOptions = CheckedStoreOptions;

/** The in-memory `BundleStore` for tests: the checked front end over maps, the same contract, nothing persisted. */
export class MemoryBundleStore extends CheckedStore {
  readonly kind = "memory";

  constructor(options: MemoryStoreOptions = {}) {
    super(new MemoryDriver(), options);
  }
}
