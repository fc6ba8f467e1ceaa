import * as ivm from "./isolated-vm.js";

/**
 * A fresh isolate with the trusted prelude installed and references to its four entry points, before any
 * tenant code ran in it. The only `reference` the pool ever takes on an isolate value is this entry array
 * (DESIGN §2.1 forbids it on values a guest could have shaped; nothing here was).
 */
export interface PreparedIsolate {
  readonly isolate: ivm.Isolate;
  readonly context: ivm.Context;
  readonly call: ivm.Reference;
  readonly collect: ivm.Reference;
  readonly adopt: ivm.Reference;
  readonly describe: ivm.Reference;
}

const PRELUDE_FILE = "isohook:prelude";
/** Code cache of each prelude script, made by this process's first compile of it (one per limits). */
const preludeCode = new Map<string, ivm.ExternalCopy>();
const MAX_PRELUDE_CACHES = 16;

/** Compile options for the prelude: this process's own code cache once it has one, else ask V8 for it. */
function preludeOptions(prelude: string): ivm.CompileOptions {
  const cachedData = preludeCode.get(prelude);
  return cachedData === undefined
    ? { filename: PRELUDE_FILE, produceCachedData: true }
    : { filename: PRELUDE_FILE, cachedData };
}

function keepPreludeCode(prelude: string, script: ivm.Script): void {
  const produced = script.cachedData;
  if (produced === undefined || preludeCode.has(prelude)) return;
  if (preludeCode.size < MAX_PRELUDE_CACHES) preludeCode.set(prelude, produced);
  else produced.release();
}

function entriesOf(isolate: ivm.Isolate, context: ivm.Context, entries: ivm.Reference): PreparedIsolate {
  const prepared: PreparedIsolate = {
    isolate,
    context,
    call: entries.getSync(0, { reference: true }),
    collect: entries.getSync(1, { reference: true }),
    adopt: entries.getSync(2, { reference: true }),
    describe: entries.getSync(3, { reference: true }),
  };
  entries.release();
  return prepared;
}

/**
 * Prepares an isolate on the caller's thread. The prelude is compiled from this process's own code cache
 * after its first compile (the prelude is trusted and the cache never leaves the process). Throws what
 * isolated-vm throws (the isolate is disposed then).
 */
export function prepareIsolate(prelude: string, memoryMb: number, timeoutMs: number): PreparedIsolate {
  const isolate = new ivm.Isolate({ memoryLimit: memoryMb });
  try {
    const context = isolate.createContextSync();
    const script = isolate.compileScriptSync(prelude, preludeOptions(prelude));
    keepPreludeCode(prelude, script);
    return entriesOf(isolate, context, script.runSync(context, { reference: true, timeout: timeoutMs }));
  } catch (error) {
    if (!isolate.isDisposed) isolate.dispose();
    throw error;
  }
}

/**
 * Prepares an isolate off the caller's thread, on isolated-vm's thread pool: only creating the isolate
 * itself (~1 ms) blocks. Safe because nothing but the trusted prelude has entered it; once tenant code
 * is in, an isolate is entered only with `applySync` (architecture rule 4: FinalizationRegistry callbacks
 * run when an isolate is entered asynchronously).
 */
export async function prepareIsolateAsync(prelude: string, memoryMb: number, timeoutMs: number) {
  const isolate = new ivm.Isolate({ memoryLimit: memoryMb });
  try {
    const context = await isolate.createContext();
    const script = await isolate.compileScript(prelude, preludeOptions(prelude));
    keepPreludeCode(prelude, script);
    return entriesOf(isolate, context, await script.run(context, { reference: true, timeout: timeoutMs }));
  } catch (error) {
    if (!isolate.isDisposed) isolate.dispose();
    throw error;
  }
}

const MAX_KINDS = 4;
/** Prepared isolates kept ready per kind: back-to-back cold calls each take one while the next is made. */
export const SPARES_PER_KIND = 3;
/** Installing the trusted prelude in a new isolate; only a starved machine takes this long. */
export const PREPARE_TIMEOUT_MS = 5_000;

interface Kind {
  readonly prelude: string;
  readonly memoryMb: number;
  readonly ready: PreparedIsolate[];
  preparing: number;
}

/**
 * Keeps `SPARES_PER_KIND` prepared isolates ready per (prelude, memory limit), so a tenant's first call
 * skips creating the isolate and installing the prelude (most of a cold start). A kind is wanted once a
 * bundle with it is loaded; a spare taken is replaced between calls (`setImmediate`: after the answers of
 * the current batch went out), one isolate at a time so a burst of calls never waits behind more than one
 * isolate's creation, and the rest of the preparation runs on isolated-vm's threads (one at a time too:
 * three at once competed with the calls for a 2-core machine's CPU).
 * At most `MAX_KINDS` kinds are kept, the least recently wanted dropped first.
 */
export class SpareIsolates {
  readonly #kinds = new Map<string, Kind>();
  readonly #perKind: number;
  /** Preparations running on isolated-vm's threads: one at a time, so refills never crowd the calls' CPU. */
  #preparing = 0;
  #scheduled = false;
  #closed = false;

  constructor(perKind = SPARES_PER_KIND) {
    this.#perKind = perKind;
  }

  /** A spare for this kind if one is ready, else undefined; either way the kind is refilled between calls. */
  take(prelude: string, memoryMb: number): PreparedIsolate | undefined {
    const kind = this.#want(prelude, memoryMb);
    const spare = kind.ready.pop();
    this.#schedule();
    return spare;
  }

  /** Starts keeping spares of this kind (a bundle with it was loaded). */
  want(prelude: string, memoryMb: number): void {
    this.#want(prelude, memoryMb);
    this.#schedule();
  }

  get size(): number {
    let size = 0;
    for (const kind of this.#kinds.values()) size += kind.ready.length;
    return size;
  }

  dispose(): void {
    this.#closed = true;
    for (const kind of this.#kinds.values()) for (const spare of kind.ready) spare.isolate.dispose();
    this.#kinds.clear();
  }

  #want(prelude: string, memoryMb: number): Kind {
    const key = `${memoryMb}\u0000${prelude}`;
    let kind = this.#kinds.get(key);
    if (kind !== undefined) {
      this.#kinds.delete(key);
    } else {
      kind = { prelude, memoryMb, ready: [], preparing: 0 };
      if (this.#kinds.size >= MAX_KINDS) this.#dropOldest();
    }
    this.#kinds.set(key, kind);
    return kind;
  }

  #dropOldest(): void {
    for (const [key, kind] of this.#kinds) {
      this.#kinds.delete(key);
      for (const spare of kind.ready) spare.isolate.dispose();
      return;
    }
  }

  #schedule(): void {
    if (this.#scheduled || this.#closed) return;
    this.#scheduled = true;
    setImmediate(this.#refillOne).unref();
  }

  #refillOne = (): void => {
    this.#scheduled = false;
    if (this.#closed || this.#preparing > 0) return;
    for (const kind of this.#kinds.values()) {
      if (kind.ready.length + kind.preparing >= this.#perKind) continue;
      kind.preparing++;
      this.#preparing++;
      prepareIsolateAsync(kind.prelude, kind.memoryMb, PREPARE_TIMEOUT_MS).then(
        (spare) => {
          kind.preparing--;
          this.#preparing--;
          if (this.#closed || this.#kinds.get(`${kind.memoryMb}\u0000${kind.prelude}`) !== kind) {
            spare.isolate.dispose();
          } else {
            kind.ready.push(spare);
          }
          this.#schedule();
        },
        () => {
          // A spare is an optimisation: the next cold call prepares its own isolate and reports any failure.
          kind.preparing--;
          this.#preparing--;
        },
      );
      return;
    }
  };
}
