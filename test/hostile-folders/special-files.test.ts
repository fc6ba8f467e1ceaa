/**
 * Item 3 of issue 16 (and the fixtures cap of item 6): every file read from a tenant's folder is a regular
 * file of bounded size and lines. A FIFO, /dev/zero (linked or a device node in the folder), a directory,
 * or a fixtures file of a million valid lines fails at once with a message that says what it is, before
 * any sandbox is started: `isohook upload` no longer hangs on a FIFO after starting a worker.
 */
import { execFileSync } from "node:child_process";
import { createWriteStream } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BundleError, compileHook, readHookFile } from "../../src/bundler/index.js";
import { runCli } from "../../src/cli/index.js";
import { lazyExecutor } from "../../src/cli/lazy-executor.js";
import { MAX_FIXTURE_LINES } from "../../src/fixture-runner/index.js";
import { runDeployGate } from "../../src/gate/index.js";
import { TenantId } from "../../src/protocol/index.js";
import { fakeIO } from "../cli/fake-io.js";
import { FIXTURE, hostWithTenants, NOOP_HOOK, testCommandIn, untouchableExecutor } from "./tenants.js";

let host: Awaited<ReturnType<typeof hostWithTenants>>;
beforeEach(async () => {
  host = await hostWithTenants();
  await host.write("index.ts", NOOP_HOOK);
});
afterEach(() => host.remove());

const FIXTURES = "tenants/attacker/fixtures.jsonl";
/** The gate names a hook's files relative to its folder: its report is stored, the uploader's paths are not. */
const GATE_FIXTURES = "fixtures.jsonl";

function mkfifo(name: string): void {
  execFileSync("mkfifo", [join(host.attacker, name)]);
}

/** Whether this process may create device nodes (root with CAP_MKNOD, outside most user namespaces). */
function canMknod(): boolean {
  try {
    execFileSync("mknod", ["/tmp/isohook-mknod-probe", "c", "1", "5"], { stdio: "ignore" });
    execFileSync("rm", ["-f", "/tmp/isohook-mknod-probe"]);
    return true;
  } catch {
    return false;
  }
}

async function gate() {
  const executor = untouchableExecutor();
  const result = await runDeployGate({
    entry: "tenants/attacker",
    cwd: host.base,
    executor,
    tenantId: TenantId.parse("attacker"),
  });
  return { reasons: result.report.reasons, used: executor.used };
}

/** `isohook test` on the attacker's folder (or as `argv` says). */
function testCommand(argv: string[] = ["tenants/attacker"]) {
  return testCommandIn(host.base, argv);
}

describe("special files in a hook folder", () => {
  it("refuses a FIFO named fixtures.jsonl at once, in the gate and in isohook test, before any sandbox", async () => {
    mkfifo("fixtures.jsonl");
    const fifo = (file: string) =>
      `${file} is a FIFO (named pipe): isohook reads only regular files from a hook folder. Replace it with a regular file.`;
    expect(await gate()).toEqual({
      reasons: [{ code: "invalid_fixtures", file: GATE_FIXTURES, message: fifo(GATE_FIXTURES) }],
      used: [],
    });
    expect(await testCommand()).toEqual({ code: "not_a_file", message: fifo(FIXTURES), opened: 0 });
  });

  it("lets isohook upload end with a clear error on a FIFO, starting no worker", async () => {
    mkfifo("fixtures.jsonl");
    const io = fakeIO(host.base, { USER: "mallory" });
    const store = join(host.base, "store.db");
    expect(await runCli(["migrate", "--store", store], fakeIO(host.base))).toBe(0);
    const code = await runCli(["upload", "--tenant", "attacker", "tenants/attacker", "--store", store], io);
    expect(code).toBe(1);
    expect(io.err()).toContain(`[invalid_fixtures] ${GATE_FIXTURES} is a FIFO (named pipe)`);
  });

  it("opens a lazy sandbox only when it is first used", async () => {
    let opened = 0;
    const executor = lazyExecutor(async () => {
      opened++;
      return untouchableExecutor();
    });
    await executor.close();
    expect(opened).toBe(0);
    await expect(executor.describe(TenantId.parse("a"), { hash: "sha256-x" as never, code: "" })).rejects.toThrow(
      "the sandbox was used",
    );
    await executor.describe(TenantId.parse("a"), { hash: "sha256-x" as never, code: "" }).catch(() => undefined);
    expect(opened).toBe(1);
  });

  it("refuses fixtures.jsonl linked to /dev/zero without reading it, and /dev/zero named as events", async () => {
    await host.link("fixtures.jsonl", "/dev/zero");
    expect((await gate()).reasons).toMatchObject([
      { code: "invalid_fixtures", message: expect.stringContaining("leads outside the hook folder") },
    ]);
    expect(await testCommand(["tenants/attacker", "--events", "/dev/zero"])).toMatchObject({
      code: "not_a_file",
      message: expect.stringMatching(/^\.\.\/.*dev\/zero is a character device: isohook reads only regular files/),
      opened: 0,
    });
  });

  it.skipIf(!canMknod())("refuses a character device node inside the folder", async () => {
    execFileSync("mknod", [join(host.attacker, "fixtures.jsonl"), "c", "1", "5"]);
    expect((await gate()).reasons).toMatchObject([
      {
        code: "invalid_fixtures",
        message: `${GATE_FIXTURES} is a character device: isohook reads only regular files from a hook folder. Replace it with a regular file.`,
      },
    ]);
  });

  it("refuses a directory named fixtures.jsonl", async () => {
    await mkdir(join(host.attacker, "fixtures.jsonl"));
    expect(await testCommand()).toMatchObject({
      code: "not_a_file",
      message: expect.stringContaining("is a directory"),
      opened: 0,
    });
  });

  it("refuses a FIFO as an imported file and as the entry, without blocking", async () => {
    await host.write(
      "index.ts",
      'import data from "./data.json";\nexport default { toolCall() { return { type: "block", reason: String(data) }; } };\n',
    );
    mkfifo("data.json");
    const imported = await compileHook("tenants/attacker", { cwd: host.base }).catch((e: unknown) => e as BundleError);
    expect(imported).toMatchObject({
      code: "unsafe_file",
      problems: [{ message: expect.stringContaining("data.json is a FIFO") }],
    });
    mkfifo("entry.ts");
    const entry = await compileHook("tenants/attacker/entry.ts", { cwd: host.base }).catch(
      (e: unknown) => e as BundleError,
    );
    expect(entry).toBeInstanceOf(BundleError);
    expect(entry).toMatchObject({
      code: "entry_not_found",
      message: expect.stringContaining("the entry is not a file or folder"),
    });
  });

  it("refuses a FIFO package.json (esbuild would block reading it) and a link to a device", async () => {
    mkfifo("package.json");
    expect(await compileHook("tenants/attacker", { cwd: host.base }).catch((e: unknown) => e)).toMatchObject({
      code: "unsafe_file",
      problems: [{ message: expect.stringMatching(/^tenants\/attacker\/package\.json is a FIFO \(named pipe\)/) }],
    });
    execFileSync("rm", [join(host.attacker, "package.json")]);
    await host.write("lib/real", "");
    await host.link("lib/zero", "/dev/zero");
    expect(await compileHook("tenants/attacker", { cwd: host.base }).catch((e: unknown) => e)).toMatchObject({
      code: "outside_root",
      problems: [{ message: expect.stringContaining("tenants/attacker/lib/zero leads outside the hook folder") }],
    });
  });

  it("refuses a FIFO as the upload's --config file", async () => {
    mkfifo("config.json");
    await host.write("fixtures.jsonl", FIXTURE);
    const io = fakeIO(host.base, { USER: "mallory" });
    const argv = ["upload", "--tenant", "attacker", "tenants/attacker", "--config", "tenants/attacker/config.json"];
    expect(await runCli(["migrate", "--store", join(host.base, "store.db")], fakeIO(host.base))).toBe(0);
    expect(await runCli([...argv, "--store", join(host.base, "store.db")], io)).toBe(1);
    expect(io.err()).toContain(
      "Cannot read the config file tenants/attacker/config.json: tenants/attacker/config.json is a FIFO",
    );
  });
});

describe("fixtures files past the caps", () => {
  it("refuses a million valid lines by size before reading them, with bounded memory", async () => {
    const file = join(host.attacker, "fixtures.jsonl");
    const out = createWriteStream(file);
    const chunk = FIXTURE.repeat(1_000);
    for (let i = 0; i < 1_000; i++) if (!out.write(chunk)) await new Promise<void>((r) => out.once("drain", () => r()));
    await new Promise((r) => out.end(r));
    const { reasons, used } = await gate();
    expect(reasons).toMatchObject([
      {
        code: "invalid_fixtures",
        message: expect.stringMatching(
          /^fixtures\.jsonl is larger than 8,388,608 bytes \([\d,]+ bytes\), the most isohook reads/,
        ),
      },
    ]);
    expect(used).toEqual([]);
  });

  it("refuses more lines than the cap even when the file is small", async () => {
    await host.write("fixtures.jsonl", `${FIXTURE}${"\n".repeat(MAX_FIXTURE_LINES)}`);
    expect(await testCommand()).toMatchObject({
      code: "too_many_lines",
      message:
        "tenants/attacker/fixtures.jsonl has more than 10,000 lines, the most isohook reads from a hook folder file. Keep the cases that matter, or split them across hooks.",
      opened: 0,
    });
  });

  it("reads no more than the cap of a file larger than fstat says (procfs reports size 0)", async () => {
    await expect(readHookFile("/proc/self/maps", { shown: "maps", maxBytes: 10 })).rejects.toMatchObject({
      code: "file_too_large",
      message: "maps is larger than 10 bytes (more), the most isohook reads from a file it is given. Make it smaller.",
    });
  });
});
