import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/index.js";
import { fakeIO } from "./fake-io.js";

describe("isohook --version", () => {
  it("prints the version from package.json and exits 0", async () => {
    const manifest = JSON.parse(await readFile(new URL("../../package.json", import.meta.url), "utf8")) as {
      version: string;
    };
    for (const flag of ["--version", "-v"]) {
      const io = fakeIO(process.cwd());
      expect(await runCli([flag], io)).toBe(0);
      expect(io.out()).toBe(`${manifest.version}\n`);
      expect(io.err()).toBe("");
    }
  });
});
