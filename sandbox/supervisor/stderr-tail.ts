import type { Readable } from "node:stream";

const STDERR_TAIL_CHARS = 4_096;

/**
 * The last 4 KiB a worker wrote to stderr (V8's out-of-memory report, a start-up error): kept for the
 * reason of its death (settle-exit.ts) and for a start failure's message. A failed spawn has no stream.
 */
export class StderrTail {
  #text = "";

  constructor(stderr: Readable | null | undefined) {
    stderr?.setEncoding("utf8");
    stderr?.on("data", (chunk: string) => {
      const tail = this.#text + chunk;
      this.#text = tail.length > STDERR_TAIL_CHARS ? tail.slice(-STDERR_TAIL_CHARS) : tail;
    });
    stderr?.on("error", () => {});
  }

  get text(): string {
    return this.#text;
  }
}
