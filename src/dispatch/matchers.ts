import {
  type BundleManifest,
  compileToolGlobs,
  type HookPoint,
  isToolPoint,
  type ToolMatchers,
  type ToolNameTest,
  type ToolPoint,
  toolNameOf,
} from "../protocol/index.js";

/** What of a manifest says which handlers are called: its points and their tool matchers. */
export type HandlerManifest = Pick<BundleManifest, "hookPoints" | "tools" | "observe">;

type PointTests = Readonly<Partial<Record<ToolPoint, ToolNameTest>>>;

/** A bundle's handlers as the dispatcher asks about them: which points, and which tools at the tool points. */
export interface BundleHandlers {
  /** Points with a decision handler. */
  readonly decides: ReadonlySet<HookPoint>;
  /** Points with an observe-only handler. */
  readonly observes: ReadonlySet<HookPoint>;
  /** Whether the decision (`observe` false) or observe handler at `point` is called for the tool `name`. */
  selects(point: HookPoint, observe: boolean, name: string): boolean;
}

const compiled = new WeakMap<HandlerManifest, BundleHandlers>();

/**
 * The manifest's handlers with their globs compiled, once per manifest object (the store's cache hands
 * every run of a version the same one): a call asks a set and, at a tool point with a matcher, one
 * compiled test, memoised per tool name.
 */
export function handlersOf(manifest: HandlerManifest): BundleHandlers {
  let handlers = compiled.get(manifest);
  if (handlers === undefined) {
    handlers = compile(manifest);
    compiled.set(manifest, handlers);
  }
  return handlers;
}

function compile(manifest: HandlerManifest): BundleHandlers {
  const decision = testsOf(manifest.tools);
  const observe = testsOf(manifest.observe?.tools);
  return {
    decides: new Set(manifest.hookPoints),
    observes: new Set(manifest.observe?.hookPoints ?? []),
    selects(point, observing, name) {
      if (!isToolPoint(point)) return true;
      const test = (observing ? observe : decision)[point];
      return test === undefined || test(name);
    },
  };
}

/**
 * Whether the bundle's decision handler (or, with `observe`, its observe-only handler) at `point` is
 * called for `event`: the point is exported and, at a tool point, its matcher selects the event's tool.
 * The one answer for the live dispatcher, the fixture runner (and so the deploy gate), replay and fuzz:
 * a fixture of a call no glob selects must see what production does, no call.
 */
export function callsHandler(manifest: HandlerManifest, point: HookPoint, observe: boolean, event: unknown): boolean {
  const handlers = handlersOf(manifest);
  if (!(observe ? handlers.observes : handlers.decides).has(point)) return false;
  return !isToolPoint(point) || handlers.selects(point, observe, toolNameOf(event as { call: { name: string } }));
}

function testsOf(matchers: ToolMatchers | undefined): PointTests {
  if (matchers === undefined) return {};
  const tests: Partial<Record<ToolPoint, ToolNameTest>> = {};
  for (const [point, globs] of Object.entries(matchers) as [ToolPoint, string[] | undefined][]) {
    if (globs !== undefined) tests[point] = compileToolGlobs(globs);
  }
  return tests;
}
