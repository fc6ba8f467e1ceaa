import { readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** isohook's own version, from the nearest package.json named "isohook" above this file (source or dist). */
export async function packageVersion(): Promise<string> {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    const text = await readFile(join(dir, "package.json"), "utf8").catch(() => undefined);
    if (text !== undefined) {
      const parsed: unknown = JSON.parse(text);
      if (typeof parsed === "object" && parsed !== null && Reflect.get(parsed, "name") === "isohook") {
        return String(Reflect.get(parsed, "version"));
      }
    }
    dir = dirname(dir);
  }
  return "unknown";
}
