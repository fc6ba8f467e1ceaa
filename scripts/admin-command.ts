import { runCli } from "../src/cli/index.js";

/**
 * Runs one `isohook` admin command with this process's argv, streams and environment, and sets the exit
 * code. The admin scripts are one line each on top of this: the command itself lives in src/cli.
 */
export async function runAdminCommand(name: string): Promise<void> {
  const controller = new AbortController();
  process.once("SIGINT", () => controller.abort());
  process.once("SIGTERM", () => controller.abort());
  try {
    process.exitCode = await runCli([name, ...process.argv.slice(2)], {
      stdout: (text) => process.stdout.write(text),
      stderr: (text) => process.stderr.write(text),
      env: process.env,
      cwd: process.cwd(),
      signal: controller.signal,
    });
  } catch (error) {
    process.stderr.write(
      `${name}: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exitCode = 1;
  }
}
