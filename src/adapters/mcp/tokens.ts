import { createHash } from "node:crypto";
import { HookFileError, readOperatorFile } from "../../bundler/index.js";
import { TenantId } from "../../protocol/index.js";
import { McpGatewayError } from "./upstream.js";

/**
 * Who a bearer token belongs to: the tenant id, or undefined for a token that is not valid. A platform
 * passes its own (its identity provider, its API keys); `readTokenFile` makes one from a file.
 */
export type Authenticate = (token: string, signal: AbortSignal) => Promise<string | undefined> | string | undefined;

const MIN_TOKEN_CHARS = 16;

const digest = (token: string) => createHash("sha256").update(token).digest("hex");

/** Largest token file read (1 MiB: tens of thousands of tokens). */
const MAX_TOKEN_FILE_BYTES = 1024 * 1024;

/**
 * Reads a token file: one `TOKEN TENANT` pair per line, `#` comments and blank lines ignored. Tokens are
 * kept and compared as SHA-256 digests, so a lookup's timing says nothing about a token's characters. The
 * file is read by the one operator-file reader: a FIFO, a device or a directory is refused at once.
 */
export async function readTokenFile(path: string): Promise<TokenFile> {
  let text: string;
  try {
    text = await readOperatorFile(path, { shown: path, what: "the token file", maxBytes: MAX_TOKEN_FILE_BYTES });
  } catch (error) {
    if (!(error instanceof HookFileError)) throw error;
    throw new McpGatewayError("invalid_options", error.message);
  }
  return tokensOf(text, path);
}

/** A token file, read: its `Authenticate`, and the tenants it names. */
export interface TokenFile {
  readonly authenticate: Authenticate;
  readonly tenants: readonly string[];
}

/** A token file's text, checked; `source` names it in errors. */
export function tokensOf(text: string, source: string): TokenFile {
  const tenants = new Map<string, string>();
  for (const [i, raw] of text.split("\n").entries()) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const [token = "", tenant = "", ...rest] = line.split(/\s+/);
    const where = `${source}:${i + 1}`;
    if (rest.length > 0 || tenant === "")
      throw new McpGatewayError(
        "invalid_options",
        `${where}: expected \`TOKEN TENANT\`, got ${rest.length + 2} fields`,
      );
    if (token.length < MIN_TOKEN_CHARS)
      throw new McpGatewayError("invalid_options", `${where}: a token needs at least ${MIN_TOKEN_CHARS} characters`);
    if (!TenantId.safeParse(tenant).success)
      throw new McpGatewayError(
        "invalid_options",
        `${where}: ${JSON.stringify(tenant)} is no tenant id (lowercase letters, digits, . _ -)`,
      );
    const key = digest(token);
    if (tenants.has(key)) throw new McpGatewayError("invalid_options", `${where}: this token is given twice`);
    tenants.set(key, tenant);
  }
  if (tenants.size === 0)
    throw new McpGatewayError("invalid_options", `${source} has no tokens: add a \`TOKEN TENANT\` line`);
  return { authenticate: (token) => tenants.get(digest(token)), tenants: [...new Set(tenants.values())] };
}
