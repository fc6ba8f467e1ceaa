import { resolve } from "node:path";
import type { McpGatewayOptions, UpstreamSpec } from "../../adapters/mcp/index.js";
import { BundleError } from "../../bundler/index.js";
import {
  type ActiveBundle,
  type BundleSource,
  type HookExecutor,
  type JsonValue,
  TenantId,
} from "../../protocol/index.js";
import {
  bundleFromEntry,
  createHookRuntime,
  fixedBundleSource,
  type HookRuntime,
  type RunEvent,
  runTrace,
} from "../../runtime/index.js";
import { type BundleStore, openStore } from "../../store/index.js";
import { line, lines, printableJson } from "../../terminal/index.js";
import {
  CliError,
  type CliIO,
  type Command,
  EXIT,
  integerFlag,
  type ParsedArgs,
  stringFlag,
  UsageError,
  writeJson,
} from "../command.js";
import { eventJson } from "../json-output-events.js";
import { LIMIT_OPTIONS, LIMITS_HELP, limitsOf } from "../limit-options.js";
import { openSandbox, processSandbox, type SandboxDeps } from "../sandbox-option.js";
import { cliStoreError, STORE_HELP, storeLocationOf, tenantFlag } from "../store-option.js";

const HELP = `Usage: isohook mcp --tenant <id> [options] -- <upstream command…>
       isohook mcp --listen <host:port> --tokens <file> --upstream <NAME=URL|command>… [options]

Puts a tenant's hooks between an MCP client and upstream MCP servers. tools/list goes through
tools.prepare (a hidden tool is also uncallable), tools/call through tool.call (block; rewrite,
re-validated against the tool's inputSchema; ask, by MCP elicitation when the client supports it, else
refused as a block), the upstream, and tool.result (patches the text and structured content the client
sees). Each MCP session is one run of the tenant: its stacking, failure policy, quarantine, budgets,
decision log, shadow and rollout apply as in any run.

With --tenant, serves one client on stdin/stdout (what an agent's MCP config starts) and runs the
upstream command after \`--\`; the trace goes to stderr. With --listen, serves MCP over Streamable HTTP at
http://HOST:PORT/mcp for many tenants: each connection's tenant comes from its bearer token, and a request
without a valid token gets 401. Each session starts its own upstream processes.

Options:
  --tenant <id>         The tenant whose hooks guard the stdio client
  --listen <host:port>  Serve Streamable HTTP (port 0 picks a free one; the first line says which)
  --tokens <file>       Bearer tokens, one \`TOKEN TENANT\` line each (tokens of 16+ characters)
  --upstream <spec>     An upstream MCP server: NAME=http(s)://… or NAME=command arg… (no shell; repeatable;
                        with several, tools are named NAME__tool)
  --hook <entry>        Bundle this hook (a .ts file or a folder) for the tenant(s) instead of reading the
                        active bundle from the store
  --config <json>       ctx.config of --hook (default null)
  --call-timeout <ms>   How long an upstream gets to start, list or answer a call, 100-600000 (default 30000)
${STORE_HELP}
${LIMITS_HELP}
  --json                One JSON event per line instead of the trace
  -h, --help            Show this help

Exit codes: 0 the client went away or the gateway was stopped (SIGINT/SIGTERM), 1 it could not start
(no bundle, an upstream that does not start, a bad token file), 2 usage.
`;

export function createMcpCommand(deps: SandboxDeps = processSandbox): Command {
  return {
    name: "mcp",
    summary: "Serve upstream MCP servers to MCP clients through a tenant's hooks (stdio or HTTP)",
    help: HELP,
    options: {
      tenant: { type: "string" },
      listen: { type: "string" },
      tokens: { type: "string" },
      upstream: { type: "string", multiple: true },
      hook: { type: "string" },
      config: { type: "string" },
      "call-timeout": { type: "string" },
      store: { type: "string" },
      ...LIMIT_OPTIONS,
    },
    allowPositionals: true,
    async run(args, io) {
      // Loaded here only: the MCP SDK is an optional peer dependency that no other command needs.
      const mcp = await import("../../adapters/mcp/index.js");
      const cliError = (error: unknown): never => {
        throw error instanceof mcp.McpGatewayError ? new CliError(error.message, error.code) : error;
      };
      const mode = modeOf(args, mcp.parseUpstream);
      const tokens =
        mode.type === "http" ? await mcp.readTokenFile(resolve(io.cwd, mode.tokens)).catch(cliError) : undefined;
      const tenants = mode.type === "stdio" ? [mode.tenantId] : (tokens?.tenants ?? []);
      const executor = await openSandbox(deps, limitsOf(args), io.signal);
      let store: BundleStore | undefined;
      let runtime: HookRuntime | undefined;
      try {
        const hook = stringFlag(args, "hook");
        if (hook === undefined) {
          store = await openStore(storeLocationOf(args, io), { create: false }).catch((error: unknown) => {
            throw cliStoreError(error);
          });
        }
        const bundles = hook === undefined ? undefined : await hookBundles(hook, tenants, executor, args, io);
        runtime = await createHookRuntime({ executor, ...(bundles ? { bundles } : store ? { store } : {}) });
        const trace = runTrace();
        const write = mode.type === "stdio" ? io.stderr : io.stdout;
        const onEvent = (event: RunEvent) => {
          if (args.json) write(lines([printableJson(eventJson(event))]));
          else {
            const traced = trace(event);
            if (traced.length > 0) write(lines(traced));
          }
        };
        const callTimeoutMs = integerFlag(args, "call-timeout", 100, 600_000);
        const gateway: McpGatewayOptions = {
          runtime,
          upstreams: mode.upstreams,
          onEvent,
          onStderr: (name, text) => io.stderr(line`[${name}] ${text}\n`),
          ...(callTimeoutMs === undefined ? {} : { callTimeoutMs }),
        };
        if (mode.type === "stdio") {
          const active = await (bundles ?? store)?.active(mode.tenantId, io.signal);
          if (active === undefined)
            throw new CliError(
              `Tenant ${mode.tenantId} has no active bundle: upload one (isohook upload <entry> --tenant ${mode.tenantId} --activate) or pass --hook <entry>`,
              "no_active_bundle",
            );
          const { closed } = await mcp
            .serveMcpStdio(gateway, { tenantId: mode.tenantId, ...(io.signal ? { signal: io.signal } : {}) })
            .catch(cliError);
          await closed;
        } else {
          const authenticate = tokens?.authenticate ?? (() => undefined);
          const listening = await mcp
            .listenMcpHttp(gateway, { host: mode.host, port: mode.port, authenticate })
            .catch(cliError);
          if (args.json) writeJson(io, { type: "listening", url: listening.url });
          else io.stdout(line`listening on ${listening.url}\n`);
          await aborted(io.signal);
          await listening.close();
        }
        return EXIT.ok;
      } finally {
        await runtime?.close();
        await store?.close();
        await executor.close();
      }
    },
  };
}

export const mcpCommand = createMcpCommand();

type Mode =
  | { readonly type: "stdio"; readonly tenantId: TenantId; readonly upstreams: readonly UpstreamSpec[] }
  | {
      readonly type: "http";
      readonly host: string;
      readonly port: number;
      readonly tokens: string;
      readonly upstreams: readonly UpstreamSpec[];
    };

function modeOf(args: ParsedArgs, parseUpstream: (text: string) => UpstreamSpec): Mode {
  const listen = stringFlag(args, "listen");
  const tenant = tenantFlag(args, false);
  if ((listen === undefined) === (tenant === undefined))
    throw new UsageError("Pass --tenant <id> (stdio, one client) or --listen <host:port> (HTTP, many tenants)");
  if (tenant !== undefined) {
    const [command, ...rest] = args.positionals;
    if (command === undefined)
      throw new UsageError("Give the upstream command after `--`: isohook mcp --tenant acme -- <command…>");
    if (args.values.upstream !== undefined || args.values.tokens !== undefined)
      throw new UsageError("--upstream and --tokens are for --listen; with --tenant the upstream command follows `--`");
    return { type: "stdio", tenantId: tenant, upstreams: [{ type: "command", name: "upstream", command, args: rest }] };
  }
  if (args.positionals.length > 0)
    throw new UsageError("With --listen, name upstreams with --upstream NAME=URL|command");
  const match = /^(.+):(\d{1,5})$/.exec(listen ?? "");
  const port = Number(match?.[2]);
  if (match === null || port > 65_535)
    throw new UsageError(`Expected --listen host:port, got ${JSON.stringify(listen)}`);
  const tokens = stringFlag(args, "tokens", true);
  const specs = (args.values.upstream ?? []) as string[];
  if (specs.length === 0) throw new UsageError("Name at least one --upstream NAME=URL|command");
  const upstreams = specs.map((spec) => {
    try {
      return parseUpstream(spec);
    } catch (error) {
      throw new UsageError(error instanceof Error ? error.message : String(error));
    }
  });
  if (new Set(upstreams.map((u) => u.name)).size !== upstreams.length)
    throw new UsageError("Give each --upstream its own NAME");
  return { type: "http", host: (match[1] ?? "").replace(/^\[(.*)\]$/, "$1"), port, tokens, upstreams };
}

async function hookBundles(
  entry: string,
  tenants: readonly string[],
  executor: HookExecutor,
  args: ParsedArgs,
  io: CliIO,
): Promise<BundleSource> {
  const raw = stringFlag(args, "config");
  let config: JsonValue = null;
  if (raw !== undefined) {
    try {
      config = JSON.parse(raw) as JsonValue;
    } catch {
      throw new UsageError(`Expected --config to be JSON, got ${JSON.stringify(raw)}`);
    }
  }
  let built: ActiveBundle;
  try {
    built = await bundleFromEntry(resolve(io.cwd, entry), {
      tenantId: tenants[0] ?? "tenant",
      executor,
      config,
      ...(io.signal ? { signal: io.signal } : {}),
    });
  } catch (error) {
    if (error instanceof BundleError) throw new CliError(`--hook ${entry}: ${error.message}`, error.code);
    throw error;
  }
  return fixedBundleSource(tenants.map((tenantId) => ({ ...built, tenantId: TenantId.parse(tenantId) })));
}

function aborted(signal: AbortSignal | undefined): Promise<void> {
  if (signal === undefined) return new Promise(() => undefined);
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener("abort", () => resolve(), { once: true });
  });
}
