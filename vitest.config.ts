import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    pool: "forks",
    // isolated-vm needs --no-node-snapshot in every process that loads it; vitest refuses it in NODE_OPTIONS.
    execArgv: ["--no-node-snapshot"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
