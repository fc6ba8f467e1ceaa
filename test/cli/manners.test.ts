import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { COMMANDS } from "../../src/cli/commands/index.js";
import { runCli } from "../../src/cli/index.js";
import { fakeIO } from "./fake-io.js";

const REPO = fileURLToPath(new URL("../..", import.meta.url));

async function cli(argv: string[]) {
  const io = fakeIO(REPO, {});
  const code = await runCli(argv, io);
  return { code, stdout: io.out(), stderr: io.err() };
}

describe("CLI manners", () => {
  it("suggests the command that was meant", async () => {
    expect(await cli(["verions"])).toEqual({
      code: 2,
      stdout: "",
      stderr:
        "isohook: Unknown command `verions` (did you mean `versions`?). Run `isohook --help` for the list of commands.\n",
    });
  });

  it("suggests the flag that was meant", async () => {
    const result = await cli(["versions", "--tenat", "acme"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^isohook versions: Unknown option --tenat \(did you mean --tenant\?\)\n/);
  });

  it("refuses a single-value flag given twice", async () => {
    const result = await cli(["list", "--tenant", "a", "--tenant", "b"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("--tenant was given more than once: give it once");
  });

  it("prints its version", async () => {
    const { version } = (await import("../../package.json", { with: { type: "json" } })).default;
    expect(await cli(["--version"])).toEqual({ code: 0, stdout: `isohook ${version}\n`, stderr: "" });
  });

  it("prints a command's help with `help <command>`, and a did-you-mean for an unknown one", async () => {
    const help = await cli(["help", "audit"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toBe((await cli(["audit", "--help"])).stdout);
    const unknown = await cli(["help", "adit"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("(did you mean `audit`?)");
  });

  it("says a hook entry that does not exist does not exist", async () => {
    const result = await cli(["test", "/no/such/dir"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("isohook test: There is no hook at /no/such/dir");
  });

  it.each(COMMANDS.map((c) => c.name))("%s's help has usage, options with -h and --json, and exit codes", (name) => {
    const help = COMMANDS.find((c) => c.name === name)?.help ?? "";
    expect(help).toMatch(new RegExp(`^Usage: isohook ${name}\\b`));
    expect(help).toContain("\nOptions:\n");
    expect(help).toMatch(/\n {2}--json {2,}\S/);
    expect(help).toMatch(/\n {2}-h, --help {2,}Show this help\n/);
    expect(help).toMatch(/\nExit codes: 0 [\s\S]+, 2 usage\.\n$/);
  });

  it("stops quietly when the reader closes the pipe (| head)", { timeout: 30_000 }, async () => {
    // The real thing: a shell pipe into `head`, which exits after its first line.
    const cliCommand = "node --no-node-snapshot --import tsx src/cli/main.ts schema";
    const child = spawn("bash", ["-c", `${cliCommand} | head -n 1 >/dev/null; echo "exit \${PIPESTATUS[0]}"`], {
      cwd: REPO,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    let stdout = "";
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    await new Promise((resolve) => child.on("close", resolve));
    expect(stderr).toBe("");
    expect(stdout).toBe("exit 0\n");
  });
});
