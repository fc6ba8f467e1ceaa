import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { parseCommandArgs } from "../../src/cli/command.js";
import { createTestCommand } from "../../src/cli/commands/test.js";
import type { HookExecutor } from "../../src/protocol/index.js";
import { fakeIO } from "../cli/fake-io.js";

/** What must never show up in a bundle, a source map or an error: the host's and the victim's secrets. */
export const SECRETS = ["PLATFORM_SECRET_KEY", "sk-host-123", "HOST_PKG_CODE", "VICTIM_SECRET", "victim policy"];

export const EVENT = { call: { id: "c1", name: "shell", args: { command: "ls" } }, batch: { index: 0, size: 1 } };
export const FIXTURE = `${JSON.stringify({ point: "tool.call", event: EVENT, expect: { noop: true } })}\n`;
export const NOOP_HOOK = "export default { toolCall() { return undefined; } };\n";

/**
 * A host with a platform project above the tenants' folders (a package.json, its secrets, its
 * node_modules, a tsconfig.json mapping a name to the secrets), a victim tenant and a clean attacker
 * folder to fill. Every path is absolute; `remove()` deletes it all.
 */
export async function hostWithTenants() {
  const base = await mkdtemp(join(tmpdir(), "isohook-hostile-folders-"));
  const files: Record<string, string> = {
    "host.env": "PLATFORM_SECRET_KEY=hunter2\n",
    "package.json": '{ "name": "platform", "imports": { "#secrets": "./platform-secrets.json" } }\n',
    "platform-secrets.json": '{ "apiKey": "sk-host-123" }\n',
    "tsconfig.json":
      '{ "compilerOptions": { "baseUrl": ".", "paths": { "platform-secrets": ["./platform-secrets.json"] } } }\n',
    "node_modules/host-pkg/package.json": '{ "name": "host-pkg", "main": "index.js" }\n',
    "node_modules/host-pkg/index.js": 'module.exports = "HOST_PKG_CODE";\n',
    "host-app.js.map": JSON.stringify({
      version: 3,
      sources: ["/srv/platform/server.ts"],
      sourcesContent: ["export const key = 'sk-host-123';"],
      mappings: "AAAA",
      names: [],
    }),
    "tenants/victim/index.ts":
      'export default { toolCall() { return { type: "block", reason: "victim policy" }; } };\n',
    "tenants/victim/fixtures.jsonl": FIXTURE,
    "tenants/victim/secret.ts": 'export const VICTIM_SECRET = "v-123";\n',
  };
  for (const [name, text] of Object.entries(files)) await put(join(base, name), text);
  const attacker = join(base, "tenants/attacker");
  await mkdir(attacker, { recursive: true });
  return {
    base,
    attacker,
    victim: join(base, "tenants/victim"),
    /** Writes a file of the attacker's folder. */
    write: (name: string, text: string) => put(join(attacker, name), text),
    /** Makes `name` in the attacker's folder a symlink to `target` (absolute, or relative to `base`). */
    link: (name: string, target: string) =>
      symlink(target.startsWith("/") ? target : join(base, target), join(attacker, name)),
    remove: () => rm(base, { recursive: true, force: true }),
  };
}

async function put(path: string, text: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, text);
}

/** An executor that records every use and fails it: a test passes it where the sandbox must not be reached. */
export function untouchableExecutor(): HookExecutor & { readonly used: string[] } {
  const used: string[] = [];
  return {
    mode: "inline",
    used,
    execute: async () => {
      used.push("execute");
      throw new Error("the sandbox was used");
    },
    describe: async () => {
      used.push("describe");
      throw new Error("the sandbox was used");
    },
    close: async () => {},
  };
}

/** `isohook test <argv>` run in `cwd` on an untouchable sandbox: how it failed, and how often it opened one. */
export async function testCommandIn(cwd: string, argv: string[]) {
  let opened = 0;
  const command = createTestCommand({
    openExecutor: async () => {
      opened++;
      return untouchableExecutor();
    },
  });
  const error = await command.run(parseCommandArgs(command, argv), fakeIO(cwd)).then(
    () => undefined,
    (e: unknown) => e as Error & { code: string },
  );
  return { code: error?.code, message: error?.message, opened };
}
