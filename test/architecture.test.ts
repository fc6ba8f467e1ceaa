/**
 * The boundaries of docs/architecture.md, "The areas", checked on every .ts file under src/ and sandbox/:
 * src/protocol imports only zod; sandbox/guest imports nothing at run time; only src/bundler imports
 * esbuild; only sandbox/worker/isolated-vm.ts loads isolated-vm (and nothing loads it statically from outside, so the
 * host never loads it unless inline mode is asked for); pg only in src/store/postgres/, loaded by import(); only
 * src/fuzz imports fast-check (one fuzz engine: the deploy gate and `isohook fuzz` both go through it), and
 * src/fuzz sits below them, on the protocol and dispatch only; only src/telemetry (and the CLI's console wiring)
 * imports @opentelemetry/api, and only that wiring loads an OpenTelemetry SDK, with import(); areas import each other only through their
 * index.ts and without cycles. Run-time imports come from esbuild's parser (type-only imports erased, as
 * at run time); `import type`/`export type` statements are found by a regex and checked too.
 */
import { readdir, readFile } from "node:fs/promises";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const SCANNED = ["src", "sandbox"];
const ISOLATED_VM_LOADER = "sandbox/worker/isolated-vm.ts";
/** The one file that loads an OpenTelemetry SDK (optional dependencies), for `ISOHOOK_OTEL=console`. */
const OTEL_CONSOLE = "src/cli/otel-console.ts";

type Kind = "static" | "dynamic" | "type";
interface Edge {
  /** Importer, relative to the repo root, `/`-separated. */
  readonly from: string;
  readonly specifier: string;
  readonly kind: Kind;
  /** The imported file relative to the repo root, for relative specifiers; the package name otherwise. */
  readonly target: string;
  readonly isPackage: boolean;
}

const posix = (path: string) => path.split(sep).join("/");

async function listTs(dir: string): Promise<string[]> {
  const entries = await readdir(join(ROOT, dir), { withFileTypes: true }).catch(() => []);
  const nested = await Promise.all(
    entries.map((e) => (e.isDirectory() ? listTs(`${dir}/${e.name}`) : Promise.resolve([`${dir}/${e.name}`]))),
  );
  return nested.flat().filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"));
}

function packageName(specifier: string): string {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : (parts[0] ?? specifier);
}

function edge(from: string, specifier: string, kind: Kind): Edge {
  if (!specifier.startsWith(".")) return { from, specifier, kind, target: packageName(specifier), isPackage: true };
  const absolute = resolve(ROOT, dirname(from), specifier).replace(/\.js$/, ".ts");
  return { from, specifier, kind, target: posix(relative(ROOT, absolute)), isPackage: false };
}

const TYPE_IMPORT = /^[ \t]*(?:import|export)[ \t]+type\b[^;]*?\bfrom[ \t]*["']([^"']+)["']/gm;

async function scan(files: string[]): Promise<Edge[]> {
  const edges: Edge[] = [];
  await build({
    entryPoints: files.map((f) => join(ROOT, f)),
    absWorkingDir: ROOT,
    bundle: true,
    write: false,
    outdir: join(ROOT, ".isohook/architecture-scan"),
    platform: "node",
    format: "esm",
    logLevel: "silent",
    plugins: [
      {
        name: "record-imports",
        setup(b) {
          b.onResolve({ filter: /.*/ }, (args) => {
            if (args.kind === "entry-point") return undefined;
            const kind: Kind = args.kind === "dynamic-import" ? "dynamic" : "static";
            edges.push(edge(posix(relative(ROOT, args.importer)), args.path, kind));
            return { path: args.path, external: true };
          });
        },
      },
    ],
  });
  for (const file of files) {
    const text = await readFile(join(ROOT, file), "utf8");
    for (const match of text.matchAll(TYPE_IMPORT)) edges.push(edge(file, match[1] ?? "", "type"));
  }
  return edges;
}

/** `src/cli/commands/bundle.ts` → `src/cli`; `src/index.ts` → `src`; each framework adapter is its own area. */
function areaOf(file: string): string | undefined {
  const parts = file.split("/");
  if (!SCANNED.includes(parts[0] ?? "")) return undefined;
  if (parts[1] === "adapters" && parts.length > 3) return parts.slice(0, 3).join("/");
  return parts.length > 2 ? `${parts[0]}/${parts[1]}` : (parts[0] ?? undefined);
}

const show = (e: Edge) =>
  `${e.from} → ${e.kind === "type" ? "import type " : e.kind === "dynamic" ? "import(" : ""}${e.specifier}`;

let files: string[];
let edges: Edge[];

beforeAll(async () => {
  files = (await Promise.all(SCANNED.map(listTs))).flat();
  edges = await scan(files);
});

describe("architecture", () => {
  it("sees static, dynamic and type-only imports", async () => {
    const probe = await scan(["sandbox/guest/hook-sdk.ts", "src/dispatch/invoke-hook.ts"]);
    expect(probe).toContainEqual(
      expect.objectContaining({ from: "src/dispatch/invoke-hook.ts", target: "src/protocol/index.ts", kind: "static" }),
    );
    expect(probe).toContainEqual(
      expect.objectContaining({ from: "sandbox/guest/hook-sdk.ts", target: "zod", kind: "type" }),
    );
    expect(probe.filter((e) => e.from === "sandbox/guest/hook-sdk.ts" && e.kind !== "type")).toEqual([]);
    expect(files).toContain("src/bundler/index.ts");
  });

  it("keeps src/protocol on zod and its own files", () => {
    const bad = edges.filter(
      (e) =>
        e.from.startsWith("src/protocol/") &&
        !(e.isPackage ? e.target === "zod" : e.target.startsWith("src/protocol/")),
    );
    expect(bad.map(show)).toEqual([]);
  });

  it("keeps sandbox/guest free of run-time imports, with types only from itself, src/protocol and zod", () => {
    const guest = edges.filter((e) => e.from.startsWith("sandbox/guest/"));
    const runtime = guest.filter((e) => e.kind !== "type");
    const types = guest.filter(
      (e) =>
        e.kind === "type" &&
        !(e.isPackage
          ? e.target === "zod"
          : e.target.startsWith("sandbox/guest/") || e.target.startsWith("src/protocol/")),
    );
    expect([...runtime, ...types].map(show)).toEqual([]);
  });

  it("imports esbuild only in src/bundler", () => {
    const bad = edges.filter((e) => e.isPackage && e.target === "esbuild" && !e.from.startsWith("src/bundler/"));
    expect(bad.map(show)).toEqual([]);
  });

  it("loads isolated-vm only in sandbox/worker/isolated-vm.ts, which picks the build for the running Node", async () => {
    const imports = edges.filter((e) => e.isPackage && e.target.startsWith("isolated-vm")).map(show);
    const naming: string[] = [];
    for (const file of files) {
      if (file === ISOLATED_VM_LOADER) continue;
      if (/["'`]isolated-vm(?:-\d+)?["'`/]/.test(await readFile(join(ROOT, file), "utf8"))) naming.push(file);
    }
    expect([...imports, ...naming]).toEqual([]);
    const loader = await readFile(join(ROOT, ISOLATED_VM_LOADER), "utf8");
    expect(loader).toContain('"isolated-vm-5"');
    expect(loader).toContain('"isolated-vm-7"');
  });

  it("imports fast-check only in src/fuzz, the one fuzz engine", () => {
    const bad = edges.filter((e) => e.isPackage && e.target === "fast-check" && !e.from.startsWith("src/fuzz/"));
    expect(bad.map(show)).toEqual([]);
  });

  it("keeps src/fuzz on the protocol and dispatch, below the gate and the CLI that use it", () => {
    const allowed = ["src/fuzz", "src/protocol", "src/dispatch"];
    const bad = edges.filter(
      (e) => e.from.startsWith("src/fuzz/") && !e.isPackage && !allowed.includes(areaOf(e.target) ?? ""),
    );
    expect(bad.map(show)).toEqual([]);
    expect(edges.some((e) => e.from.startsWith("src/gate/") && e.target === "src/fuzz/index.ts")).toBe(true);
  });

  it("loads pg only with import() in the PostgreSQL store, so a SQLite host never loads it", () => {
    const pg = edges.filter((e) => e.isPackage && e.target === "pg");
    const bad = pg.filter((e) => e.kind === "static" || !e.from.startsWith("src/store/postgres/"));
    expect(bad.map(show)).toEqual([]);
    expect(pg.filter((e) => e.kind === "dynamic").map((e) => e.from)).toEqual([
      "src/store/postgres/postgres-connections.ts",
    ]);
  });

  it("imports `ai` only in the guard adapter (an optional peer the core never loads), @ai-sdk/* only in the two AI SDK adapters", () => {
    const ai = edges.filter((e) => e.isPackage && e.target === "ai");
    expect(ai.filter((e) => !e.from.startsWith("src/adapters/ai-sdk/")).map(show)).toEqual([]);
    const providers = edges.filter((e) => e.isPackage && e.target.startsWith("@ai-sdk/"));
    const adapters = ["src/adapters/ai-sdk/", "src/adapters/ai-sdk-model/"];
    expect(providers.filter((e) => !adapters.some((a) => e.from.startsWith(a))).map(show)).toEqual([]);
    expect(ai.length).toBeGreaterThan(0);
    expect(providers.some((e) => e.target === "@ai-sdk/openai-compatible")).toBe(true);
  });

  it("loads @ai-sdk/* in the model adapter only with import(), so importing isohook never loads them", () => {
    const eager = edges.filter(
      (e) => e.isPackage && e.target.startsWith("@ai-sdk/") && e.from.startsWith("src/adapters/ai-sdk-model/"),
    );
    expect(eager.filter((e) => e.kind === "static").map(show)).toEqual([]);
    expect(
      eager
        .filter((e) => e.kind === "dynamic")
        .map((e) => e.target)
        .sort(),
    ).toEqual(["@ai-sdk/openai-compatible", "@ai-sdk/provider", "@ai-sdk/provider-utils"]);
  });

  it("imports @opentelemetry/api only in src/telemetry (and the CLI's console wiring), so instrumentation has one home", () => {
    const bad = edges.filter(
      (e) =>
        e.isPackage &&
        e.target === "@opentelemetry/api" &&
        !e.from.startsWith("src/telemetry/") &&
        e.from !== OTEL_CONSOLE,
    );
    expect(bad.map(show)).toEqual([]);
  });

  it("loads an OpenTelemetry SDK only with import() in the CLI's console wiring: the library uses the API alone", () => {
    const sdk = edges.filter(
      (e) => e.isPackage && e.target.startsWith("@opentelemetry/") && e.target !== "@opentelemetry/api",
    );
    const bad = sdk.filter((e) => e.from !== OTEL_CONSOLE || e.kind === "static");
    expect(bad.map(show)).toEqual([]);
    expect(
      sdk
        .filter((e) => e.kind === "dynamic")
        .map((e) => e.target)
        .sort(),
    ).toEqual(["@opentelemetry/sdk-metrics", "@opentelemetry/sdk-trace-base"]);
  });

  it("imports @modelcontextprotocol/sdk only in src/adapters/mcp, which the CLI loads only with import()", () => {
    const bad = edges.filter(
      (e) => e.isPackage && e.target === "@modelcontextprotocol/sdk" && !e.from.startsWith("src/adapters/mcp/"),
    );
    const eager = edges.filter(
      (e) => e.kind === "static" && e.target.startsWith("src/adapters/mcp/") && e.from.startsWith("src/cli/"),
    );
    expect([...bad, ...eager].map(show)).toEqual([]);
    expect(edges.some((e) => e.from === "src/cli/commands/mcp.ts" && e.kind === "dynamic")).toBe(true);
  });

  it("loads sandbox/worker from outside only with import() or import type, so the host never loads isolated-vm unasked", () => {
    const bad = edges.filter(
      (e) => e.kind === "static" && e.target.startsWith("sandbox/worker/") && !e.from.startsWith("sandbox/worker/"),
    );
    expect(bad.map(show)).toEqual([]);
  });

  it("imports nothing from test/, hooks/ or scripts/", () => {
    const bad = edges.filter((e) => !e.isPackage && /^(test|hooks|scripts)\//.test(e.target));
    expect(bad.map(show)).toEqual([]);
  });

  it("crosses areas only through the target area's index.ts", () => {
    const bad = edges.filter((e) => {
      if (e.isPackage) return false;
      const from = areaOf(e.from);
      const to = areaOf(e.target);
      if (from === to || to === undefined) return false;
      // The hook SDK is bundled into the guest: it may take types straight from the protocol files.
      if (from === "sandbox/guest" && to === "src/protocol" && e.kind === "type") return false;
      return e.target !== `${to}/index.ts`;
    });
    expect(bad.map(show)).toEqual([]);
  });

  it("has no import cycles between areas", () => {
    const graph = new Map<string, Map<string, Edge>>();
    for (const e of edges) {
      const from = areaOf(e.from);
      const to = e.isPackage ? undefined : areaOf(e.target);
      if (from === undefined || to === undefined || from === to) continue;
      if (!graph.has(from)) graph.set(from, new Map());
      graph.get(from)?.set(to, e);
    }
    const cycles: string[] = [];
    const state = new Map<string, "visiting" | "done">();
    const visit = (area: string, path: string[]): void => {
      state.set(area, "visiting");
      for (const [next, via] of graph.get(area) ?? []) {
        if (state.get(next) === "visiting") {
          const loop = [...path.slice(path.indexOf(next)), area, next];
          cycles.push(`${loop.join(" → ")} (closing import: ${show(via)})`);
        } else if (!state.has(next)) {
          visit(next, [...path, area]);
        }
      }
      state.set(area, "done");
    };
    for (const area of [...graph.keys()].sort()) if (!state.has(area)) visit(area, []);
    expect(cycles).toEqual([]);
  });

  it("maps every package subpath to an entry file, and every file at the top of src/ to a subpath", async () => {
    const pkg = JSON.parse(await readFile(join(ROOT, "package.json"), "utf8")) as {
      exports: Record<string, string | { readonly default?: string }>;
    };
    // A subpath maps to a source file, or to its compiled twin under dist/ (`dist/src/x.js` is `src/x.ts`).
    const entries = Object.values(pkg.exports)
      .map((target) => (typeof target === "string" ? target : (target.default ?? "")))
      .filter((path) => /\.(ts|js)$/.test(path))
      .map((path) =>
        path
          .replace(/^\.\//, "")
          .replace(/^dist\//, "")
          .replace(/\.js$/, ".ts"),
      );
    const top = files.filter((f) => /^src\/[^/]+\.ts$/.test(f));
    expect(top.filter((f) => !entries.includes(f))).toEqual([]);
    expect(entries.filter((f) => !files.includes(f))).toEqual([]);
  });

  it("imports no subpath entry file from inside the library", () => {
    const bad = edges.filter((e) => !e.isPackage && /^src\/[^/]+\.ts$/.test(e.target));
    expect(bad.map(show)).toEqual([]);
  });

  it("keeps the root export to 40 names, 25 of them values", async () => {
    const text = await readFile(join(ROOT, "src/index.ts"), "utf8");
    const names = [...text.matchAll(/^export (type )?\{([^}]*)\}/gm)].flatMap((m) =>
      (m[2] ?? "")
        .split(",")
        .map((n) => n.trim())
        .filter((n) => n !== "")
        .map((n) => (m[1] !== undefined && !n.startsWith("type ") ? `type ${n}` : n)),
    );
    const values = names.filter((n) => !n.startsWith("type "));
    expect(text).not.toMatch(/^export \*/m);
    expect(names.length).toBeLessThanOrEqual(40);
    expect(values.length).toBeLessThanOrEqual(25);
    const loaded = await import("../src/index.js");
    expect(Object.keys(loaded).sort()).toEqual(values.sort());
  });

  it("exports no zod schema from any public entry: shapes are JSON Schema (isohook/schemas)", async () => {
    const entries: Record<string, Record<string, unknown>> = {
      index: await import("../src/index.js"),
      admin: await import("../src/admin.js"),
      loop: await import("../src/loop.js"),
      sandbox: await import("../src/sandbox.js"),
      schemas: await import("../src/schemas.js"),
    };
    const zodValues: string[] = [];
    for (const [entry, loaded] of Object.entries(entries)) {
      for (const [name, value] of Object.entries(loaded))
        if (value instanceof z.ZodType) zodValues.push(`${entry}: ${name}`);
    }
    expect(zodValues).toEqual([]);
  });
});
