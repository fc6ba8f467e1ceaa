import { describe, expect, it } from "vitest";
import { parseUpstream, tokensOf } from "../../../src/adapters/mcp/index.js";
import { isToolResult, patchedResult, toolResultOf } from "../../../src/adapters/mcp/shapes.js";
import { runCli } from "../../../src/cli/index.js";
import { fakeIO } from "../../cli/fake-io.js";
import { REPO } from "./gateway-fixture.js";

/** What the gateway is given: token files, upstream specs, flags, and the results it maps for the hooks. */

describe("token files", () => {
  it("maps each token to its tenant and knows no other", async () => {
    const { authenticate, tenants } = tokensOf(
      "# who\nacme-token-0123456789 acme\n\nglobex-token-0123456789 globex\n",
      "t",
    );
    const signal = new AbortController().signal;
    expect(await authenticate("acme-token-0123456789", signal)).toBe("acme");
    expect(await authenticate("acme-token-012345678", signal)).toBeUndefined();
    expect(tenants).toEqual(["acme", "globex"]);
  });

  it.each([
    ["short 1", "tokens:1: a token needs at least 16 characters"],
    ["acme-token-0123456789", "tokens:1: expected `TOKEN TENANT`, got 2 fields"],
    ["acme-token-0123456789 Not-A-Tenant", 'tokens:1: "Not-A-Tenant" is no tenant id'],
    ["acme-token-0123456789 acme\nacme-token-0123456789 globex", "tokens:2: this token is given twice"],
    ["# nothing\n", "tokens has no tokens"],
  ])("refuses %j, saying why", (text, message) => {
    expect(() => tokensOf(text, "tokens")).toThrow(message);
  });
});

describe("upstream specs", () => {
  it("reads a URL or a command", () => {
    expect(parseUpstream("search=https://example.test/mcp")).toEqual({
      type: "url",
      name: "search",
      url: "https://example.test/mcp",
    });
    expect(parseUpstream("files=npx server /srv")).toEqual({
      type: "command",
      name: "files",
      command: "npx",
      args: ["server", "/srv"],
    });
  });

  it.each(["files", "=npx x", "bad name=npx", "files="])("refuses %j with the shape it expects", (text) => {
    expect(() => parseUpstream(text)).toThrow(/Expected an upstream as NAME=URL or NAME=command/);
  });
});

describe("isohook mcp flags", () => {
  it.each([
    [[], "Pass --tenant <id> (stdio, one client) or --listen <host:port>"],
    [["--tenant", "acme"], "Give the upstream command after `--`"],
    [["--tenant", "acme", "--listen", "127.0.0.1:1"], "Pass --tenant <id>"],
    [["--listen", "nowhere", "--tokens", "t", "--upstream", "a=b"], 'Expected --listen host:port, got "nowhere"'],
    [["--listen", "127.0.0.1:0", "--tokens", "t"], "Name at least one --upstream"],
    [
      ["--listen", "127.0.0.1:0", "--tokens", "t", "--upstream", "a=x", "--upstream", "a=y"],
      "Give each --upstream its own NAME",
    ],
  ])("refuses %j as a usage error", async (argv, message) => {
    const io = fakeIO(REPO);
    expect(await runCli(["mcp", ...argv], io)).toBe(2);
    expect(io.err()).toContain(message);
  });
});

describe("results as the hooks see them", () => {
  const image = { type: "image" as const, data: "AAAA", mimeType: "image/png" };

  it("shows the text blocks and embedded text, and keeps images when a patch replaces the text", () => {
    const original = {
      content: [
        { type: "text" as const, text: "key sk-1" },
        image,
        { type: "resource" as const, resource: { uri: "file:///a", text: "also sk-1" } },
      ],
    };
    const seen = toolResultOf(original);
    expect(seen).toEqual({ content: "key sk-1\nalso sk-1", isError: false });
    if (!isToolResult(seen)) throw new Error("not a ToolResult");
    const patched = patchedResult(original, seen, { content: "key [REDACTED]", isError: false });
    expect(patched.content).toEqual([{ type: "text", text: "key [REDACTED]" }, image]);
  });

  it("refuses a result whose text the hooks cannot be shown whole", () => {
    const refused = toolResultOf({ content: [{ type: "text", text: "x".repeat(60_001) }] });
    expect(refused).toMatchObject({
      isError: true,
      content: [{ text: expect.stringMatching(/^upstream result refused: /) }],
    });
  });
});
