import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

export default defineConfig({
  // The package's exports point at dist/; tests run on the sources (as tsconfig.json's `paths` do).
  resolve: {
    alias: {
      "isohook/hook-sdk": fileURLToPath(new URL("./sandbox/guest/hook-sdk.ts", import.meta.url)),
    },
  },
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/build-dist.ts"],
    pool: "forks",
    // isolated-vm needs --no-node-snapshot in every process that loads it; vitest refuses it in NODE_OPTIONS.
    execArgv: ["--no-node-snapshot"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
