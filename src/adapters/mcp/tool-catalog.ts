import type { Tool as McpTool } from "@modelcontextprotocol/sdk/types.js";
import type { JsonSchemaType, JsonSchemaValidator } from "@modelcontextprotocol/sdk/validation";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import type { JsonObject, ToolSpec } from "../../protocol/index.js";
import { toolSpecOf } from "./shapes.js";
import type { Upstream } from "./upstream.js";

/** One upstream tool as the gateway's client sees it. */
export interface CatalogTool {
  /** The name the client calls: the upstream's, prefixed `UPSTREAM__` when the gateway has several. */
  readonly name: string;
  readonly upstream: Upstream;
  /** The tool as its upstream listed it (its own name). */
  readonly tool: McpTool;
  readonly spec: ToolSpec;
  /** Checks arguments against `inputSchema`: the problem, or undefined when they fit. */
  readonly checkArgs: (args: JsonObject) => string | undefined;
  /** Checks structured content against `outputSchema` (undefined: the tool has none). */
  readonly checkOutput: ((value: unknown) => string | undefined) | undefined;
}

const validator = new AjvJsonSchemaValidator();

function checker(schema: unknown): (value: unknown) => string | undefined {
  let compiled: JsonSchemaValidator<unknown> | undefined;
  return (value) => {
    compiled ??= validator.getValidator(schema as JsonSchemaType);
    const result = compiled(value);
    return result.valid ? undefined : (result.errorMessage ?? "does not match the schema");
  };
}

/**
 * Every tool of a session's upstreams, listed once and kept until an upstream says its list changed. A tool
 * whose name isohook's hooks cannot be shown is left out: what the hooks cannot see is never offered.
 */
export class ToolCatalog {
  readonly #upstreams: readonly Upstream[];
  #tools: Promise<ReadonlyMap<string, CatalogTool>> | undefined;

  constructor(upstreams: readonly Upstream[]) {
    this.#upstreams = upstreams;
  }

  /** Forgets the listing: the next `tools()` lists the upstreams again. */
  invalidate(): void {
    this.#tools = undefined;
  }

  tools(options: {
    readonly signal: AbortSignal;
    readonly timeoutMs: number;
  }): Promise<ReadonlyMap<string, CatalogTool>> {
    if (this.#tools === undefined) {
      const listing = this.#list(options);
      this.#tools = listing;
      // A failed listing is not kept: the next request lists again.
      listing.catch(() => {
        if (this.#tools === listing) this.#tools = undefined;
      });
    }
    return this.#tools;
  }

  async #list(options: { readonly signal: AbortSignal; readonly timeoutMs: number }) {
    const prefixed = this.#upstreams.length > 1;
    const byName = new Map<string, CatalogTool>();
    for (const upstream of this.#upstreams) {
      let cursor: string | undefined;
      do {
        const page = await upstream.client.listTools(cursor === undefined ? {} : { cursor }, {
          signal: options.signal,
          timeout: options.timeoutMs,
        });
        for (const tool of page.tools) {
          const name = prefixed ? `${upstream.spec.name}__${tool.name}` : tool.name;
          const spec = toolSpecOf(name, tool);
          if (spec === undefined || byName.has(name)) continue;
          byName.set(name, {
            name,
            upstream,
            tool,
            spec,
            checkArgs: checker(tool.inputSchema),
            checkOutput: tool.outputSchema === undefined ? undefined : checker(tool.outputSchema),
          });
        }
        cursor = page.nextCursor;
      } while (cursor !== undefined);
    }
    return byName;
  }
}
