import { CheckedStore, type CheckedStoreOptions } from "../checked-store.js";
import type { MemoryCheckpointLedger } from "../checkpoint-ledger.js";
import { MemoryDriver } from "./memory-driver.js";
import type { MemoryQuarantine } from "./memory-quarantine.js";

export type MemoryStoreOptions = CheckedStoreOptions;

/** The in-memory `BundleStore` for tests: the checked front end over maps, the same contract, nothing persisted. */
export class MemoryBundleStore extends CheckedStore {
  readonly kind = "memory";
  readonly checkpoints: MemoryCheckpointLedger;
  readonly quarantine: MemoryQuarantine;

  constructor(options: MemoryStoreOptions = {}) {
    const driver = new MemoryDriver(options.clock ?? Date.now);
    super(driver, options);
    this.checkpoints = driver.checkpoints;
    this.quarantine = driver.quarantine;
  }
}
