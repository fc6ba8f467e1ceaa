import type { CliIO } from "../../src/cli/index.js";

/** A CliIO that records what a command writes, for runCli tests. */
export function fakeIO(
  cwd: string,
  env: Record<string, string> = {},
): CliIO & { out: () => string; err: () => string } {
  let out = "";
  let err = "";
  return {
    stdout: (text) => {
      out += text;
    },
    stderr: (text) => {
      err += text;
    },
    env,
    cwd,
    out: () => out,
    err: () => err,
  };
}
