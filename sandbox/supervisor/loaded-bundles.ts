import type { BundleHash, SandboxBundle, SandboxLimits, WorkerRequest } from "../../src/protocol/index.js";

/** Bundles kept loaded per worker; past it the least recently used is unloaded. */
const MAX_LOADED_BUNDLES = 512;

/**
 * Which bundles one worker has loaded, least recently used first: a bundle's code crosses the channel once
 * per worker (`load`), before its first call, and the worker forgets the oldest past 512 (`unload`).
 */
export class LoadedBundles {
  readonly #loaded = new Map<BundleHash, true>();
  readonly #limits: SandboxLimits;

  constructor(limits: SandboxLimits) {
    this.#limits = limits;
  }

  /** Sends what the worker needs before a call on `bundle`: nothing if it has it, else its load (and an unload). */
  ensure(bundle: SandboxBundle, send: (request: WorkerRequest) => void): void {
    const loaded = this.#loaded;
    if (loaded.has(bundle.hash)) {
      // Keep least-recently-used order only once eviction can matter.
      if (loaded.size > MAX_LOADED_BUNDLES / 2) {
        loaded.delete(bundle.hash);
        loaded.set(bundle.hash, true);
      }
      return;
    }
    loaded.set(bundle.hash, true);
    send({ kind: "load", bundleHash: bundle.hash, code: bundle.code, limits: this.#limits });
    if (loaded.size > MAX_LOADED_BUNDLES) {
      for (const oldest of loaded.keys()) {
        loaded.delete(oldest);
        send({ kind: "unload", bundleHash: oldest });
        break;
      }
    }
  }
}
