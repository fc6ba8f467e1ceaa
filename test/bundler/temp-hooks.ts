import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

/** Writes hook modules into a fresh temp folder (outside the repo, so nothing resolves by accident). */
export async function tempHooks(files: Record<string, string>): Promise<{ dir: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), "isohook-bundler-"));
  await tempFiles(dir, files);
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/** Writes `files` (relative paths → text) under `dir`, creating folders. */
export async function tempFiles(dir: string, files: Record<string, string>): Promise<void> {
  for (const [name, text] of Object.entries(files)) {
    await mkdir(dirname(join(dir, name)), { recursive: true });
    await writeFile(join(dir, name), text);
  }
}

export const HOOK = `import { defineHooks } from "isohook/hook-sdk";
export default defineHooks({
  toolCall(event) {
    return event.call.name === "shell" ? { type: "block", reason: "no shell" } : undefined;
  },
});
`;
