import * as ivm from "./isolated-vm.js";

/**
 * What the maker isolate runs: create an isolate (V8's `Isolate::New`, ~1 ms), its context, and the
 * prelude, all from a task on isolated-vm's thread pool. isolated-vm refuses its synchronous methods on
 * other isolates from there, hence the async ones. Without a code cache for the prelude, it first makes a
 * warm one (`warm`), which it returns with the isolate.
 */
const MAKER_SOURCE = `(function () {
  async function warm(memoryMb, prelude, filename, timeout, warmUpJson) {
    const warmUp = JSON.parse(warmUpJson);
    const isolate = new ivm.Isolate({ memoryLimit: memoryMb });
    try {
      const context = await isolate.createContext();
      const entries = await (await isolate.compileScript(prelude, { filename })).run(context, { reference: true, timeout });
      const [call, adopt, describe] = await Promise.all([0, 2, 3].map((i) => entries.get(i, { reference: true })));
      await (await isolate.compileScript(warmUp.bundle)).run(context, { timeout });
      await adopt.apply(undefined, [], { timeout });
      for (const args of warmUp.calls) await call.apply(undefined, args, { timeout });
      await describe.apply(undefined, [], { timeout });
      // Compiled again, the prelude comes from V8's in-isolate cache with every function the run compiled.
      const again = await isolate.compileScript(prelude, { filename, produceCachedData: true });
      return again.cachedData;
    } catch {
      return undefined; // only an optimisation: the isolate is prepared without a cache, and the next warms again
    } finally {
      isolate.dispose();
    }
  }
  return async function prepare(memoryMb, prelude, filename, cachedData, timeout, warmUp) {
    const made = cachedData === undefined ? await warm(memoryMb, prelude, filename, timeout, warmUp) : undefined;
    const isolate = new ivm.Isolate({ memoryLimit: memoryMb });
    try {
      const context = await isolate.createContext();
      const options = { filename, cachedData: cachedData ?? made };
      const entries = await (await isolate.compileScript(prelude, options)).run(context, { reference: true, timeout });
      const refs = await Promise.all([0, 1, 2, 3].map((i) => entries.get(i, { reference: true })));
      entries.release();
      return [isolate, context, made, ...refs];
    } catch (error) {
      if (!isolate.isDisposed) isolate.dispose();
      throw error;
    }
  };
})()`;

/**
 * What the maker runs in a throwaway isolate to make a warm code cache of the prelude: a trusted bundle of
 * our own, adopted, called and described, so the cache holds the functions a first call needs compiled
 * (each later isolate's prelude run drops from ~1 ms to ~0.1 ms, and a first call by ~0.2 ms).
 */
export interface WarmUp {
  readonly bundle: string;
  /** `call` arguments: point, event JSON, context JSON, observe. */
  readonly calls: readonly (readonly [string, string, string, boolean])[];
}

/** A handle the maker returned, checked to be of the class it must be. */
function handle<T>(value: unknown, of: ivm.HandleClass<T>): T {
  if (value instanceof of) return value;
  throw new Error(`The isolate maker returned ${typeof value} where an isolated-vm ${of.name} was expected`);
}

/** The made isolate's handles out of the maker's result array (then released). */
function takeHandles(made: ivm.Reference): MadeIsolate {
  let isolate: ivm.Isolate | undefined;
  try {
    isolate = handle(made.getSync(0), ivm.Isolate);
    const cachedData = made.getSync(2);
    const entry = (i: number) => handle(made.getSync(i), ivm.Reference);
    return {
      isolate,
      context: handle(made.getSync(1), ivm.Context),
      cachedData: cachedData === undefined ? undefined : handle(cachedData, ivm.ExternalCopy),
      entries: [entry(3), entry(4), entry(5), entry(6)],
    };
  } catch (error) {
    if (isolate !== undefined && !isolate.isDisposed) isolate.dispose();
    throw error;
  } finally {
    made.release();
  }
}

/** The maker's own heap: a few handles per preparation, collected as it goes. */
const MAKER_MEMORY_MB = 16;

/** The parts of a prepared isolate, as the maker hands them over, each checked to be the handle it must be. */
export interface MadeIsolate {
  readonly isolate: ivm.Isolate;
  readonly context: ivm.Context;
  /** The warm code cache of the prelude made for this isolate, when none was given. */
  readonly cachedData: ivm.ExternalCopy | undefined;
  /** The prelude's four entry points: call, collect, adopt, describe. */
  readonly entries: readonly [ivm.Reference, ivm.Reference, ivm.Reference, ivm.Reference];
}

/**
 * A trusted isolate holding isolated-vm's own library, which prepares isolates entirely on isolated-vm's
 * threads: the worker's main thread only starts the task and takes the handles back (≈ 0.05 ms), where
 * `new ivm.Isolate` alone would block it for about a millisecond. No tenant code ever enters the maker, and
 * the isolates it makes get nothing of the library: they hold the prelude only, entered here asynchronously
 * before any tenant code is in them (architecture rule 4). One per process (`isolateMaker`), made on first
 * use and never disposed (architecture rule 11): on isolated-vm 7 an isolate it made that outlives it
 * crashed the process at exit, and disposing it during a preparation crashed it on 5.0.4.
 */
class IsolateMaker {
  #maker: { isolate: ivm.Isolate; prepare: ivm.Reference } | undefined;
  #preparing = 0;
  #waiters: (() => void)[] = [];

  /** Prepares an isolate off this thread; rejects with what isolated-vm threw (nothing is left behind). */
  async prepare(
    prelude: string,
    memoryMb: number,
    filename: string,
    cachedData: ivm.ExternalCopy | undefined,
    timeoutMs: number,
    warmUp: WarmUp,
  ): Promise<MadeIsolate> {
    const { prepare } = this.#open();
    this.#preparing++;
    try {
      const args = [memoryMb, prelude, filename, cachedData, timeoutMs, JSON.stringify(warmUp)];
      const made = await prepare.apply(undefined, args, { result: { reference: true, promise: true } });
      return takeHandles(made);
    } finally {
      this.#preparing--;
      if (this.#preparing === 0) {
        const waiters = this.#waiters;
        this.#waiters = [];
        for (const resolve of waiters) resolve();
      }
    }
  }

  /** Resolves once no isolate is being made: isolated-vm can crash the process if it exits during one. */
  settled(): Promise<void> {
    if (this.#preparing === 0) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  #open(): { isolate: ivm.Isolate; prepare: ivm.Reference } {
    if (this.#maker !== undefined && !this.#maker.isolate.isDisposed) return this.#maker;
    const isolate = new ivm.Isolate({ memoryLimit: MAKER_MEMORY_MB });
    try {
      const context = isolate.createContextSync();
      context.global.setSync("ivm", ivm.library);
      const prepare = context.evalSync(MAKER_SOURCE, { reference: true });
      this.#maker = { isolate, prepare };
      return this.#maker;
    } catch (error) {
      isolate.dispose();
      throw error;
    }
  }
}

/** The process's one maker. */
export const isolateMaker = new IsolateMaker();
export type { IsolateMaker };
