#!/usr/bin/env node
import { printable } from "../terminal/index.js";
import { runCli } from "./run-cli.js";

const controller = new AbortController();
process.once("SIGINT", () => controller.abort());
process.once("SIGTERM", () => controller.abort());

// `isohook … | head`: the reader has what it wanted once it closes the pipe; stop quietly, without a stack.
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE") throw error;
    controller.abort();
    process.exit(0);
  });
}

try {
  const code = await runCli(process.argv.slice(2), {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    env: process.env,
    cwd: process.cwd(),
    signal: controller.signal,
  });
  process.exitCode = code;
} catch (error) {
  process.stderr.write(
    printable(`isohook: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`, {
      keepNewlines: true,
    }),
  );
  process.exitCode = 1;
}
