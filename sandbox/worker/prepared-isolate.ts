import type { IsolateMaker, WarmUp } from "./isolate-maker.js";
import * as ivm from "./isolated-vm.js";

/**
 * A fresh isolate with the trusted prelude installed and references to its four entry points, before any
 * tenant code ran in it. The only `reference` the pool ever takes on an isolate value is this entry array
 * (docs/architecture.md, "The trust boundary", forbids it on values a guest could have shaped; nothing here was).
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
/**
 * Code cache of each prelude script (one per limits), made by this process: from its first compile, or
 * `warm` from the maker's warm-up run (isolate-maker.ts), which replaces a cold one.
 */
const preludeCode = new Map<string, { readonly data: ivm.ExternalCopy; readonly warm: boolean }>();
const MAX_PRELUDE_CACHES = 16;

/** Compile options for the prelude: this process's own code cache once it has one, else ask V8 for it. */
function preludeOptions(prelude: string): ivm.CompileOptions {
  const cachedData = preludeCode.get(prelude)?.data;
  return cachedData === undefined
    ? { filename: PRELUDE_FILE, produceCachedData: true }
    : { filename: PRELUDE_FILE, cachedData };
}

function keepPreludeCode(prelude: string, produced: ivm.ExternalCopy | undefined, warm: boolean): void {
  if (produced === undefined) return;
  const kept = preludeCode.get(prelude);
  const better = kept === undefined ? preludeCode.size < MAX_PRELUDE_CACHES : warm && !kept.warm;
  if (!better) {
    produced.release();
    return;
  }
  kept?.data.release();
  preludeCode.set(prelude, { data: produced, warm });
}

/** A trusted hook the maker runs to warm the prelude's code cache: the usual path of a first call. */
const WARM_UP: WarmUp = {
  bundle: `var __isohook_bundle = { default: {
    toolCall(event, ctx) { console.log("warm-up", event.call.name); ctx.state.calls = 1; return { type: "block", reason: "warm-up" }; },
    toolResult() {},
  } };`,
  calls: [
    [
      "tool.call",
      '{"call":{"id":"w","name":"shell","args":{"command":"ls"}},"batch":{"index":0,"size":1}}',
      '{"state":{}}',
      false,
    ],
    ["tool.result", '{"call":{"id":"w","name":"shell","args":{}},"result":{"output":"ok"}}', '{"state":{}}', false],
  ],
};

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
    keepPreludeCode(prelude, script.cachedData, false);
    return entriesOf(isolate, context, script.runSync(context, { reference: true, timeout: timeoutMs }));
  } catch (error) {
    if (!isolate.isDisposed) isolate.dispose();
    throw error;
  }
}

/**
 * Prepares an isolate entirely off the caller's thread, on isolated-vm's thread pool (isolate-maker.ts):
 * the caller's thread only starts the task and takes the handles back. Safe because nothing but the
 * trusted prelude has entered the isolate; once tenant code is in, an isolate is entered only with
 * `applySync` (architecture rule 4: FinalizationRegistry callbacks run when an isolate is entered
 * asynchronously).
 */
export async function prepareIsolateOffThread(
  maker: IsolateMaker,
  prelude: string,
  memoryMb: number,
  timeoutMs: number,
): Promise<PreparedIsolate> {
  const kept = preludeCode.get(prelude);
  const cachedData = kept?.warm === true ? kept.data : undefined;
  const made = await maker.prepare(prelude, memoryMb, PRELUDE_FILE, cachedData, timeoutMs, WARM_UP);
  keepPreludeCode(prelude, made.cachedData, true);
  const [call, collect, adopt, describe] = made.entries;
  return { isolate: made.isolate, context: made.context, call, collect, adopt, describe };
}

/** Installing the trusted prelude in a new isolate; only a starved machine takes this long. */
export const PREPARE_TIMEOUT_MS = 5_000;
