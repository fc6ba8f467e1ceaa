/**
 * The guest prelude: trusted code installed into every isolate BEFORE the tenant bundle. It lives in the
 * guest area's index.ts because guest files may not import each other at run time (docs/architecture.md, "The areas")
 * and the worker may reach this area only through its index; hook-sdk.ts is the other guest file, for hook authors.
 *
 * How it gets there: the worker embeds `installPrelude.toString()` in a classic script (see
 * sandbox/worker/prelude-script.ts). The function must therefore be self-contained: it references only its
 * parameter and the isolate's own globals, never anything else of this module. Whatever loader ran this
 * file (tsx, vitest) has erased the types; esbuild's `keepNames` may wrap inner functions in `__name(…)`,
 * which the script defines as the identity. The worker self-tests the produced script once per process.
 *
 * Protocol with the worker (strings only, docs/architecture.md, "The trust boundary"):
 * - the script evaluates to `[call, collect, adopt, describe]` (the worker takes references to these four
 *   trusted functions before any tenant code runs);
 * - the worker runs the bundle script, then `adopt()`, which takes `__isohook_bundle.default` into this
 *   closure and clears the global;
 * - `call(point, eventJson, ctxJson, observe)` returns one `GuestReply` JSON string, or `""` when the
 *   handler returned a thenable: the microtasks then drain inside the same timed `applySync` (V8 runs them
 *   when the call returns), and the worker calls `collect()` for the settled reply (`pending` if it did not
 *   settle). `observe` calls the handler of the default export's `observe` object and replies with a null
 *   result whatever it returned. A handler is a function or `{ tools, handler }` (`handler` read per call;
 *   `tools` is the host's business, recorded at describe);
 * - `describe()` returns a `DescribeReply` JSON string listing the default export's keys (and the
 *   `observe` object's), each read once, with the `tools` of the tool handlers copied.
 *
 * Tamper resistance: every intrinsic the prelude uses after install is captured here, first. Later it
 * calls only captured functions, concatenates only strings it made, keeps per-call data in closure
 * variables (never in objects whose prototype a tenant could give setters), and reads a thrown error's
 * `stack` without running tenant code (`stackOf`), as a capped string the host re-parses. So
 * a tenant that redefines `JSON`, `Array.prototype.*`, `Object.prototype.toJSON`, `Promise.prototype.then`
 * or `Error.prepareStackTrace` changes at most its own result, which the host validates anyway. Every
 * entry point catches everything; the last resort is a constant reply.
 */

export interface PreludeConfig {
  /** Longest JSON text of a result, in UTF-16 code units (`Limits.maxResultChars`). */
  readonly maxResultChars: number;
  /** Longest JSON text of `ctx.state` handed back (`Limits.maxStateChars`). */
  readonly maxStateChars: number;
  readonly maxLogLines: number;
  /** Budget for the JSON text of all log lines of one call (`Limits.maxLogChars`). */
  readonly maxLogChars: number;
  /** Longest reply string; the host's `maxReplyChars(limits)`. */
  readonly maxReplyChars: number;
  /** Hook point → handler key of the default export (`tool.call` → `toolCall`). */
  readonly handlers: { readonly [point: string]: string };
}

type Call = (point: string, eventJson: string, ctxJson: string, observe?: boolean) => string;

/** What the prelude script evaluates to, in this order. */
export type PreludeEntries = readonly [call: Call, collect: () => string, adopt: () => string, describe: () => string];

export function installPrelude(config: PreludeConfig): PreludeEntries {
  const G = globalThis as unknown as Record<string, unknown>;
  const ReflectApply = Reflect.apply;
  const JSONStringify = JSON.stringify;
  const JSONParse = JSON.parse;
  const ObjectKeys = Object.keys;
  const ObjectHasOwn = Object.hasOwn;
  const ObjectDefineProperty = Object.defineProperty;
  const ObjectGetOwnPropertyDescriptor = Object.getOwnPropertyDescriptor;
  const ErrorCtor = Error;
  // From V8 12.x (Node 24) an error's own `stack` is an accessor whose getter is one intrinsic: captured
  // here, before any bundle runs, so a getter a tenant installs is never taken for it.
  const ErrorStackGetter = ObjectGetOwnPropertyDescriptor(new ErrorCtor(), "stack")?.get;
  const ArrayIsArray = Array.isArray;
  const StringCtor = String;
  const StringSlice = String.prototype.slice;
  const MAX_MESSAGE = 1_000;
  const MAX_KEYS = 64;
  const MAX_KEY_CHARS = 128;
  // A `{ tools, handler }` object's keys listed, and globs copied, before the host's caps (8; 64 of 128).
  const MAX_FORM_KEYS = 8;
  const MAX_GLOBS = 65;
  const MAX_GLOB_CHARS = 129;
  const TOOL_HANDLERS: Record<string, true> = {
    __proto__: null,
    toolCall: true,
    toolResult: true,
    toolInvalid: true,
  } as unknown as Record<string, true>;
  // Strings this long are never sliced (that would flatten a rope inside a small heap); they are described.
  const MAX_SLICEABLE = 1 << 20;
  /** Characters of a thrown error's stack sent to the host (enough for ~20 frames). */
  const MAX_STACK = 2_000;
  const TOO_LARGE = { tooLarge: true };
  const FALLBACK = '{"kind":"failed","code":"threw","message":"The hook prelude could not build a reply","logs":[]}';

  const handlerOf: Record<string, string> = { __proto__: null } as unknown as Record<string, string>;
  for (const point of ObjectKeys(config.handlers)) handlerOf[point] = config.handlers[point] as string;
  const { maxResultChars, maxStateChars, maxLogLines, maxLogChars, maxReplyChars } = config;

  let hooks: unknown;
  let adoptFailure: string | undefined = "The bundle was not loaded";

  // Logs of the current call: JSON text of the array elements, joined with commas.
  let logJson = "";
  let logLines = 0;
  let logChars = 0;
  let logDropped = 0;

  // The current call's pending thenable, if any.
  let asyncToken = 0;
  let asyncState: "none" | "pending" | "fulfilled" | "rejected" = "none";
  let asyncValue: unknown;
  let asyncPoint = "";
  let asyncCtx: unknown;
  // The current call is an observe-only handler's: its result is discarded.
  let observing = false;

  /** A data descriptor without a prototype: a tenant's `get`/`value` on Object.prototype cannot leak in. */
  function descriptor(value: unknown, enumerable = true): PropertyDescriptor {
    return { __proto__: null, value, writable: true, enumerable, configurable: true } as PropertyDescriptor;
  }

  let budget = 0;
  function guard(this: unknown, key: string, value: unknown): unknown {
    const t = typeof value;
    if (t === "undefined" || t === "function" || t === "symbol") return value;
    budget -= key.length + (t === "string" ? (value as string).length : 1);
    if (budget < 0) throw TOO_LARGE;
    return value;
  }

  /**
   * JSON text of `value`, or TOO_LARGE if it would exceed `cap` characters. Throws what stringify throws.
   * Re-entrant: a tenant's toJSON may log an object while its result is being serialized.
   */
  function toJson(value: unknown, cap: number): string | undefined | typeof TOO_LARGE {
    if (value === undefined || value === null) return "null";
    if (typeof value === "string" && value.length > cap) return TOO_LARGE;
    const outer = budget;
    budget = cap;
    try {
      const json = JSONStringify(value, guard);
      return json !== undefined && json.length > cap ? TOO_LARGE : json;
    } catch (error) {
      if (error === TOO_LARGE) return TOO_LARGE;
      throw error;
    } finally {
      budget = outer;
    }
  }

  function clip(text: string): string {
    if (text.length <= MAX_MESSAGE) return text;
    if (text.length > MAX_SLICEABLE) return `(a message of ${text.length} characters)`;
    return `${ReflectApply(StringSlice, text, [0, MAX_MESSAGE]) as string}…`;
  }

  /** A message for any thrown value; runs tenant getters/toString inside the timed call, never throws. */
  function describeThrown(error: unknown): string {
    try {
      const t = typeof error;
      if (t === "string") return `The hook threw a string: ${clip(error as string)}`;
      if (t === "object" && error !== null) {
        let name: unknown;
        let message: unknown;
        try {
          name = (error as { name?: unknown }).name;
          message = (error as { message?: unknown }).message;
        } catch {
          return "The hook threw an object whose properties throw";
        }
        if (typeof message === "string") return clip(`${typeof name === "string" ? clip(name) : "Error"}: ${message}`);
        return "The hook threw an object that is not an Error";
      }
      if (t === "function") return "The hook threw a function";
      if (t === "symbol") return "The hook threw a symbol";
      return `The hook threw ${t}: ${clip(StringCtor(error))}`;
    } catch {
      return "The hook threw a value that cannot be described";
    }
  }

  function resetLogs(): void {
    logJson = "";
    logLines = 0;
    logChars = 0;
    logDropped = 0;
  }

  function pushLog(line: string): void {
    if (logLines >= maxLogLines || logChars >= maxLogChars) {
      logDropped++;
      return;
    }
    let text = line;
    if (text.length > maxLogChars - logChars) {
      if (text.length > MAX_SLICEABLE) {
        logDropped++;
        return;
      }
      text = `${ReflectApply(StringSlice, text, [0, maxLogChars - logChars]) as string}…`;
    }
    const json = JSONStringify(text);
    if (json.length > maxLogChars - logChars) {
      logDropped++;
      return;
    }
    logJson = logLines === 0 ? json : `${logJson},${json}`;
    logLines++;
    logChars += json.length + 1;
  }

  function formatArg(arg: unknown): string {
    if (typeof arg === "string") return arg;
    try {
      const t = typeof arg;
      if (t === "object" && arg !== null) {
        const json = toJson(arg, maxLogChars);
        return json === TOO_LARGE ? "[object too large to log]" : typeof json === "string" ? json : "[object]";
      }
      if (t === "symbol") return "[symbol]";
      if (t === "function") return "[function]";
      return StringCtor(arg);
    } catch {
      return "[unprintable]";
    }
  }

  function logger(level: string): (...args: unknown[]) => void {
    return (...args: unknown[]): void => {
      if (logLines >= maxLogLines || logChars >= maxLogChars) {
        logDropped++;
        return;
      }
      let line = level;
      for (let i = 0; i < args.length && line.length <= maxLogChars; i++) {
        let part = formatArg(args[i]);
        if (part.length > MAX_SLICEABLE) part = `[${part.length} characters]`;
        line = line === "" ? part : `${line} ${part}`;
      }
      pushLog(line);
    };
  }

  const log = logger("");
  const assertFailed = logger("[assert] Assertion failed:");
  const noop = (): void => {};
  // The whole console surface libraries call, so none of them throws: timers and counters are no-ops.
  const consoleObject = {
    log,
    info: logger("[info]"),
    debug: logger("[debug]"),
    warn: logger("[warn]"),
    error: logger("[error]"),
    trace: logger("[trace]"),
    dir: log,
    dirxml: log,
    table: log,
    group: log,
    groupCollapsed: log,
    groupEnd: noop,
    assert: (condition?: unknown, ...args: unknown[]): void => {
      if (!condition) ReflectApply(assertFailed, undefined, args);
    },
    count: noop,
    countReset: noop,
    time: noop,
    timeEnd: noop,
    timeLog: noop,
    timeStamp: noop,
    profile: noop,
    profileEnd: noop,
    clear: noop,
  };
  ObjectDefineProperty(G, "console", descriptor(consoleObject, false));

  function logsPart(): string {
    if (logDropped === 0) return `"logs":[${logJson}]`;
    const marker = JSONStringify(
      `[${logDropped} more log line(s) dropped: over ${maxLogLines} lines or ${maxLogChars} characters]`,
    );
    return `"logs":[${logJson === "" ? marker : `${logJson},${marker}`}]`;
  }

  /**
   * A thrown error's `stack`, capped, or undefined, read without running tenant getters: only an own data
   * property or V8's own stack accessor (never a getter the tenant defined), formatted by V8's default (a
   * tenant's `Error.prepareStackTrace` is set aside for the read, or the stack is skipped when it cannot be). The text
   * is only something the host parses for positions in this bundle, never trusted.
   */
  function stackOf(error: unknown): string | undefined {
    if (typeof error !== "object" || error === null) return undefined;
    let prepare: PropertyDescriptor | undefined;
    try {
      prepare = ObjectGetOwnPropertyDescriptor(ErrorCtor, "prepareStackTrace");
      if (prepare !== undefined && (!("value" in prepare) || prepare.writable !== true)) return undefined;
      if (prepare !== undefined) (ErrorCtor as { prepareStackTrace?: unknown }).prepareStackTrace = undefined;
      const own = ObjectGetOwnPropertyDescriptor(error, "stack");
      const stack: unknown =
        own === undefined
          ? undefined
          : "value" in own
            ? own.value
            : own.get !== undefined && own.get === ErrorStackGetter
              ? ReflectApply(ErrorStackGetter, error, [])
              : undefined;
      if (typeof stack !== "string" || stack.length > MAX_SLICEABLE) return undefined;
      return stack.length <= MAX_STACK ? stack : (ReflectApply(StringSlice, stack, [0, MAX_STACK]) as string);
    } catch {
      return undefined;
    } finally {
      if (prepare !== undefined) {
        try {
          (ErrorCtor as { prepareStackTrace?: unknown }).prepareStackTrace = prepare.value;
        } catch {
          // Not ours to fix: the tenant made it unwritable meanwhile, which only affects its own stacks.
        }
      }
    }
  }

  function failed(
    code: "threw" | "pending" | "result_too_large" | "invalid_result",
    message: string,
    stack?: string,
  ): string {
    const stackPart = stack === undefined ? "" : `"stack":${JSONStringify(stack)},`;
    const reply = `{"kind":"failed","code":"${code}","message":${JSONStringify(clip(message))},${stackPart}${logsPart()}}`;
    if (reply.length <= maxReplyChars) return reply;
    // Tiny limits: keep the code, drop the logs and most of the message.
    const short = JSONStringify(ReflectApply(StringSlice, clip(message), [0, 100]) as string);
    return `{"kind":"failed","code":"${code}","message":${short},"logs":[]}`;
  }

  function finish(reply: string): string {
    resetLogs();
    return typeof reply === "string" && reply.length <= maxReplyChars ? reply : FALLBACK;
  }

  /** The reply for a handler's settled value: result and state as capped JSON, or a failure. */
  function returned(point: string, settled: unknown, ctx: unknown): string {
    const value = observing ? undefined : settled;
    const t = typeof value;
    if (t === "function" || t === "symbol" || t === "bigint") {
      return failed("invalid_result", `The ${point} hook returned a ${t}, not a JSON result`);
    }
    let resultJson: string | undefined | typeof TOO_LARGE;
    try {
      resultJson = toJson(value, maxResultChars);
    } catch (error) {
      return failed("invalid_result", `The ${point} hook's result is not JSON-serializable: ${describeThrown(error)}`);
    }
    if (resultJson === TOO_LARGE) {
      return failed("result_too_large", `The ${point} hook's result is over ${maxResultChars} characters of JSON`);
    }
    if (resultJson === undefined) return failed("invalid_result", `The ${point} hook's result is not JSON`);
    let state: unknown;
    try {
      state = (ctx as { state?: unknown }).state;
    } catch (error) {
      return failed("invalid_result", `Reading ctx.state failed: ${describeThrown(error)}`);
    }
    if (typeof state !== "object" || state === null || ArrayIsArray(state)) {
      return failed("invalid_result", "ctx.state must stay a JSON object");
    }
    let stateJson: string | undefined | typeof TOO_LARGE;
    try {
      stateJson = toJson(state, maxStateChars);
    } catch (error) {
      return failed("invalid_result", `ctx.state is not JSON-serializable: ${describeThrown(error)}`);
    }
    if (stateJson === TOO_LARGE)
      return failed("result_too_large", `ctx.state is over ${maxStateChars} characters of JSON`);
    if (stateJson === undefined) return failed("invalid_result", "ctx.state is not JSON");
    return `{"kind":"returned","result":${resultJson},"state":${stateJson},${logsPart()}}`;
  }

  async function settle(token: number, thenable: unknown): Promise<void> {
    try {
      const value = await thenable;
      if (token === asyncToken) {
        asyncState = "fulfilled";
        asyncValue = value;
      }
    } catch (error) {
      if (token === asyncToken) {
        asyncState = "rejected";
        asyncValue = error;
      }
    }
  }

  /** A handler in `container`: a function, or the `handler` of a `{ tools, handler }` object (read now). */
  function handlerIn(container: unknown, key: string): unknown {
    const value = ownValue(container, key);
    if (typeof value !== "object" || value === null) return value;
    return (value as { handler?: unknown }).handler;
  }

  function ownValue(container: unknown, key: string): unknown {
    if (typeof container !== "object" || container === null || !ObjectHasOwn(container, key)) return undefined;
    return (container as Record<string, unknown>)[key];
  }

  const call: Call = (point, eventJson, ctxJson, observe) => {
    try {
      observing = observe === true;
      asyncToken++;
      asyncState = "none";
      asyncValue = undefined;
      asyncCtx = undefined;
      resetLogs();
      if (adoptFailure !== undefined) return finish(failed("threw", adoptFailure));
      const key = handlerOf[point];
      if (key === undefined) return finish(failed("threw", `Unknown hook point ${JSONStringify(clip(point))}`));
      let event: unknown;
      let ctx: unknown;
      try {
        event = JSONParse(eventJson);
        ctx = JSONParse(ctxJson);
      } catch {
        return finish(failed("threw", "The host sent an event or ctx that is not JSON"));
      }
      if (typeof ctx !== "object" || ctx === null)
        return finish(failed("threw", "The host sent a ctx that is no object"));
      const state = (ctx as { state?: unknown }).state;
      if (typeof state !== "object" || state === null || ArrayIsArray(state)) {
        ObjectDefineProperty(ctx, "state", descriptor({}));
      }
      let value: unknown;
      try {
        const handler = observing ? handlerIn(ownValue(hooks, "observe"), key) : handlerIn(hooks, key);
        if (handler === undefined || handler === null) return finish(returned(point, undefined, ctx));
        if (typeof handler !== "function") {
          return finish(failed("invalid_result", `The default export's ${key} is a ${typeof handler}, not a function`));
        }
        value = ReflectApply(handler, hooks, [event, ctx]);
      } catch (error) {
        return finish(failed("threw", describeThrown(error), stackOf(error)));
      }
      let thenable = false;
      try {
        thenable =
          ((typeof value === "object" && value !== null) || typeof value === "function") &&
          typeof (value as { then?: unknown }).then === "function";
      } catch (error) {
        return finish(failed("invalid_result", `The ${point} hook's result cannot be read: ${describeThrown(error)}`));
      }
      if (thenable) {
        asyncState = "pending";
        asyncPoint = point;
        asyncCtx = ctx;
        void settle(asyncToken, value);
        return "";
      }
      return finish(returned(point, value, ctx));
    } catch {
      return finish(FALLBACK);
    }
  };

  const collect = (): string => {
    try {
      const state = asyncState;
      asyncState = "none";
      if (state === "fulfilled") return finish(returned(asyncPoint, asyncValue, asyncCtx));
      if (state === "rejected") return finish(failed("threw", describeThrown(asyncValue), stackOf(asyncValue)));
      if (state === "pending") {
        asyncToken++;
        return finish(
          failed("pending", `The ${asyncPoint} hook's promise did not settle: hooks cannot await timers or I/O`),
        );
      }
      return finish(failed("threw", "No asynchronous hook call to collect"));
    } catch {
      return finish(FALLBACK);
    } finally {
      asyncValue = undefined;
      asyncCtx = undefined;
    }
  };

  const adopt = (): string => {
    try {
      const bundle = G.__isohook_bundle;
      try {
        G.__isohook_bundle = undefined;
        delete G.__isohook_bundle;
      } catch {
        // A `var` binding is not deletable; it stays undefined.
      }
      if ((typeof bundle !== "object" && typeof bundle !== "function") || bundle === null) {
        adoptFailure = "The bundle did not define __isohook_bundle: build it with isohook's bundler";
        return "";
      }
      hooks = (bundle as { default?: unknown }).default;
      adoptFailure = undefined;
      return "";
    } catch (error) {
      adoptFailure = `Loading the bundle failed: ${describeThrown(error)}`;
      return "";
    }
  };

  /** The `DescribedKey` JSON of one key, each property read once, or the failure reply. */
  function describeKey(name: string, value: unknown, prefix: string): { json: string; failure?: string } {
    if (name.length > MAX_KEY_CHARS) {
      return {
        json: "",
        failure: failed("invalid_result", `The default export has a key of ${name.length} characters`),
      };
    }
    const type = typeof value;
    let json = `{"name":${JSONStringify(name)},"type":"${type}"`;
    if (type !== "object" || value === null) return { json: `${json}}` };
    const keys = ObjectKeys(value as object);
    if (keys.length > MAX_FORM_KEYS) {
      const message = `The default export's ${prefix}${name} has ${keys.length} keys: a matched handler is { tools, handler }`;
      return { json: "", failure: failed("invalid_result", message) };
    }
    let listed = "";
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i] as string;
      if (key.length > MAX_KEY_CHARS) {
        const message = `The default export's ${prefix}${name} has a key of ${key.length} characters`;
        return { json: "", failure: failed("invalid_result", message) };
      }
      listed = i === 0 ? JSONStringify(key) : `${listed},${JSONStringify(key)}`;
    }
    json = `${json},"keys":[${listed}],"handler":"${typeof (value as { handler?: unknown }).handler}"`;
    if (TOOL_HANDLERS[name] !== true) return { json: `${json}}` };
    const tools = (value as { tools?: unknown }).tools;
    if (tools === undefined) return { json: `${json}}` };
    if (!ArrayIsArray(tools)) return { json: `${json},"tools":"not-an-array"}` };
    const length = (tools as unknown[]).length;
    let globs = "";
    for (let i = 0; i < length && i < MAX_GLOBS; i++) {
      const glob: unknown = (tools as unknown[])[i];
      const item = typeof glob === "string" && glob.length <= MAX_GLOB_CHARS ? JSONStringify(glob) : "null";
      globs = i === 0 ? item : `${globs},${item}`;
    }
    return { json: `${json},"tools":[${globs}]}` };
  }

  function describeKeys(object: object, prefix: string): { entries: string; failure?: string } {
    const keys = ObjectKeys(object);
    if (keys.length > MAX_KEYS) {
      const message = `The default export's observe has ${keys.length} keys, more than ${MAX_KEYS}`;
      return { entries: "", failure: failed("invalid_result", message) };
    }
    let entries = "";
    for (let i = 0; i < keys.length; i++) {
      const name = keys[i] as string;
      let entry: { json: string; failure?: string };
      try {
        entry = describeKey(name, (object as Record<string, unknown>)[name], prefix);
      } catch (error) {
        const message = `Reading the default export's ${prefix}${clip(name)} threw: ${describeThrown(error)}`;
        return { entries: "", failure: failed("threw", message) };
      }
      if (entry.failure !== undefined) return { entries: "", failure: entry.failure };
      entries = i === 0 ? entry.json : `${entries},${entry.json}`;
    }
    return { entries };
  }

  const describe = (): string => {
    try {
      resetLogs();
      if (adoptFailure !== undefined) return finish(failed("threw", adoptFailure));
      if ((typeof hooks !== "object" && typeof hooks !== "function") || hooks === null) {
        return finish(
          failed("invalid_result", "The bundle has no default export object: export default defineHooks({ … })"),
        );
      }
      const keys = ObjectKeys(hooks);
      if (keys.length > MAX_KEYS) {
        return finish(failed("invalid_result", `The default export has ${keys.length} keys, more than ${MAX_KEYS}`));
      }
      let handlers = "";
      let observe = "";
      for (let i = 0; i < keys.length; i++) {
        const name = keys[i] as string;
        let value: unknown;
        try {
          value = (hooks as Record<string, unknown>)[name];
        } catch (error) {
          return finish(failed("threw", `Reading the default export's ${clip(name)} threw: ${describeThrown(error)}`));
        }
        if (name === "observe" && typeof value === "object" && value !== null) {
          const listed = describeKeys(value, "observe.");
          if (listed.failure !== undefined) return finish(listed.failure);
          observe = `,"observe":[${listed.entries}]`;
          continue;
        }
        let entry: { json: string; failure?: string };
        try {
          entry = describeKey(name, value, "");
        } catch (error) {
          return finish(failed("threw", `Reading the default export's ${clip(name)} threw: ${describeThrown(error)}`));
        }
        if (entry.failure !== undefined) return finish(entry.failure);
        handlers = handlers === "" ? entry.json : `${handlers},${entry.json}`;
      }
      return finish(`{"kind":"described","handlers":[${handlers}]${observe}}`);
    } catch (error) {
      return finish(failed("threw", describeThrown(error)));
    }
  };

  return [call, collect, adopt, describe];
}
