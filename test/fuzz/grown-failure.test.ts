import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/index.js";
import { fakeIO } from "../cli/fake-io.js";
import { toolCallFixture, writeHook } from "../gate/hook-modules.js";

/** Fails only once the command grows past 2,000 characters: the random fuzz's short strings never reach it. */
const FAILS_WHEN_LONG = `
export default {
  toolCall(event) {
    const command = event.call.args.command;
    if (typeof command === "string" && command.length > 2000) throw new Error("command too long");
  },
};
`;

let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "isohook-grown-"));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("a failure the timeout hunt grows into", () => {
  it("reports the grown event that failed, not its seed, in --json", async () => {
    const entry = writeHook(
      root,
      "long",
      FAILS_WHEN_LONG,
      toolCallFixture("shell", { command: "ls -la" }, { noop: true }),
    );
    const io = fakeIO(root);
    const code = await runCli(["fuzz", entry, "--runs", "20", "--time", "60", "--seed", "3", "--json"], io);
    expect(code).toBe(1);
    const [report] = io
      .out()
      .trim()
      .split("\n")
      .map((text) => JSON.parse(text) as Record<string, unknown>) as [
      {
        points: {
          failures: {
            found: string;
            event: { call: { args: { command: string } } };
            grown: { size: number; path: string };
          }[];
        }[];
      },
    ];
    const grown = report.points[0]?.failures.find((f) => f.found === "grow");
    expect(grown?.grown.path).toBe("call.args.command");
    const command = grown?.event.call.args.command ?? "";
    expect(command.length).toBe(grown?.grown.size);
    expect(command.length).toBeGreaterThan(2000);
  }, 180_000);
});
