import { createRequire } from "node:module";
import { IsolatedVmMissingError } from "./errors.js";

/**
 * The one module that loads isolated-vm. isolated-vm 5.0.4 builds on Node 20 and 22 but not against Node
 * 24's V8 headers; 7.0.1 needs Node 24 or later. package.json lists both as optional dependencies under
 * npm aliases: npm skips 7.x where its `engines` excludes the running Node, and drops 5.x when its build
 * fails, so one install holds the build for the running Node and this module picks it by Node's major
 * version. Both ship the same `isolated-vm.d.ts`; the part of it the sandbox uses is declared here, so
 * nothing else depends on which one is loaded (and type-checking does not need either installed).
 */

/** `isolated-vm-5` or `isolated-vm-7`: the alias in package.json for this Node's build. */
export const ISOLATED_VM_PACKAGE =
  Number(process.versions.node.split(".")[0]) >= 24 ? "isolated-vm-7" : "isolated-vm-5";

export interface IsolateOptions {
  /** Heap limit in MB; isolated-vm's minimum is 8. */
  readonly memoryLimit?: number;
}

export interface RunOptions {
  /** Milliseconds; isolated-vm reads 0 as none. */
  readonly timeout?: number;
}

export interface HeapStatistics {
  readonly total_heap_size: number;
  readonly used_heap_size: number;
  readonly heap_size_limit: number;
  readonly externally_allocated_size: number;
}

/** A copy of data held outside any isolate; here, V8 code cache this process produced itself. */
export interface ExternalCopy {
  /** Hands the value itself to the receiving isolate: a `SharedArrayBuffer` arrives sharing its memory. */
  copyInto(): unknown;
  release(): void;
}

/** `cachedData` only ever carries code cache this worker produced from the same source, never a tenant's bytes. */
export interface CompileOptions {
  readonly filename?: string;
  readonly cachedData?: ExternalCopy;
  readonly produceCachedData?: boolean;
}

export interface Isolate {
  /** CPU time this isolate has used, in nanoseconds. */
  readonly cpuTime: bigint;
  /** Wall time this isolate has been running code, in nanoseconds. */
  readonly wallTime: bigint;
  /** True once disposed, by `dispose()` or by isolated-vm after a memory-limit event. */
  readonly isDisposed: boolean;
  createContextSync(): Context;
  /** Runs on isolated-vm's thread pool: only for isolates no tenant code has entered (rule 4). */
  createContext(): Promise<Context>;
  compileScriptSync(code: string, options?: CompileOptions): Script;
  /** Runs on isolated-vm's thread pool: only for isolates no tenant code has entered (rule 4). */
  compileScript(code: string, options?: CompileOptions): Promise<Script>;
  getHeapStatisticsSync(): HeapStatistics;
  /** Throws when the isolate is already disposed. */
  dispose(): void;
}

export interface Context {
  readonly global: Reference;
  evalSync(code: string, options: RunOptions & { readonly reference: true }): Reference;
  evalSync(code: string, options?: RunOptions): unknown;
  release(): void;
}

export interface Script {
  /** Code cache of this compile, when `produceCachedData` was asked. */
  readonly cachedData?: ExternalCopy;
  /** True when the `cachedData` given was not accepted (V8 compiled from source instead). */
  readonly cachedDataRejected?: boolean;
  runSync(context: Context, options: RunOptions & { readonly reference: true }): Reference;
  runSync(context: Context, options?: RunOptions): unknown;
  /** Runs on isolated-vm's thread pool: only for isolates no tenant code has entered (rule 4). */
  run(context: Context, options: RunOptions & { readonly reference: true }): Promise<Reference>;
  release(): void;
}

/** A handle on a value inside the isolate; arguments and results cross as copies of primitives. */
export interface Reference {
  applySync(receiver?: undefined, args?: readonly unknown[], options?: RunOptions): unknown;
  /** With `result: { reference, promise }`: a reference to what the function's promise settled to. */
  apply(
    receiver: undefined,
    args: readonly unknown[],
    options: RunOptions & { readonly result: { readonly reference: true; readonly promise: true } },
  ): Promise<Reference>;
  apply(receiver?: undefined, args?: readonly unknown[], options?: RunOptions): Promise<unknown>;
  getSync(key: string | number, options: { readonly reference: true }): Reference;
  /** The property itself when it is a primitive or one of isolated-vm's transferable handles. */
  getSync(key: string | number): unknown;
  setSync(key: string | number, value: unknown): boolean;
  release(): void;
}

export type IsolateConstructor = new (options?: IsolateOptions) => Isolate;
/** Handle classes, for `instanceof` checks of handles that crossed from another isolate. */
export type HandleClass<T> = abstract new (...args: never[]) => T;
/** A host value the guest may call synchronously (probes only: the sandbox hands guests no host reference). */
export type ReferenceConstructor = new (value: unknown) => Reference;
/** A copy of a transferable value held outside any isolate (here, the CPU guard's shared cells only). */
export type ExternalCopyConstructor = new (value: unknown) => ExternalCopy;

interface IsolatedVmModule {
  readonly Isolate: IsolateConstructor;
  readonly Reference: ReferenceConstructor;
  readonly Context: HandleClass<Context>;
  readonly ExternalCopy: ExternalCopyConstructor;
}

function load(): IsolatedVmModule {
  try {
    // The native module's shape is the declared one in both builds (same isolated-vm.d.ts).
    return createRequire(import.meta.url)(ISOLATED_VM_PACKAGE) as IsolatedVmModule;
  } catch (error) {
    throw new IsolatedVmMissingError(ISOLATED_VM_PACKAGE, error);
  }
}

const loaded = load();

/** isolated-vm's `Isolate` class, from the build for the running Node. */
export const Isolate: IsolateConstructor = loaded.Isolate;
export const Reference: ReferenceConstructor = loaded.Reference;
export const Context: HandleClass<Context> = loaded.Context;
export const ExternalCopy: ExternalCopyConstructor = loaded.ExternalCopy;
/**
 * isolated-vm's whole library, which is itself transferable: only ever handed to the worker's own maker
 * isolate (isolate-maker.ts), never to an isolate that runs tenant code.
 */
export const library: unknown = loaded;
