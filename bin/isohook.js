#!/usr/bin/env node
// Re-exec the TypeScript CLI under tsx with --no-node-snapshot (isolated-vm needs it in every process that loads it).
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const tsx = createRequire(import.meta.url).resolve("tsx");
const result = spawnSync(
  process.execPath,
  ["--no-node-snapshot", "--import", tsx, join(root, "src/cli/main.ts"), ...process.argv.slice(2)],
  { stdio: "inherit" },
);
process.exit(result.status ?? 1);
