#!/usr/bin/env node
import { printable } from "../terminal/index.js";
import { runCli } from "./run-cli.js";

const controller = new AbortController();
process.once("SIGINT", () => controller.abort());
process.once("SIGTERM", () => controller.abort());

/**
 * `isohook … | head`: once the reader closes the pipe, output to it stops, and the command goes on: a run
 * still writes its checkpoint and stores its decision-log records, and the exit code is the command's.
 */
function outputTo(stream: NodeJS.WriteStream): (text: string) => void {
  let closed = false;
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE" && error.code !== "ERR_STREAM_DESTROYED") throw error;
    closed = true;
  });
  return (text) => {
    if (!closed) stream.write(text);
  };
}

try {
  const code = await runCli(process.argv.slice(2), {
    stdout: outputTo(process.stdout),
    stderr: outputTo(process.stderr),
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
