import { randomBytes } from "node:crypto";
import { closeSync, openSync, readSync, unlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RUNNING_MARK_BYTES, type RunningMark, readRunningMark } from "../../src/protocol/index.js";

/**
 * Where mark files are made: memory-backed `/dev/shm` where the system has it (the worker writes the mark
 * before every call, and a write there skips the disk filesystem's journal: ~0.5 µs of ~2.5), else the
 * temp dir.
 */
const MARK_DIRS = ["/dev/shm", tmpdir()];

/**
 * The host's end of one worker's running-call mark (src/protocol/running-mark.ts): an anonymous file
 * (created owner-only, unlinked at once) whose descriptor the worker inherits. Reading it is one
 * positional read; the host does that only when a deadline timer fires or the worker has died.
 */
export class RunningMarkFile {
  readonly fd: number;
  readonly #bytes = new Uint8Array(RUNNING_MARK_BYTES);
  readonly #view = new Float64Array(this.#bytes.buffer);
  #closed = false;

  private constructor(fd: number) {
    this.fd = fd;
  }

  /** A fresh mark file, or undefined when none can be made (the supervisor then blames the oldest call). */
  static open(): RunningMarkFile | undefined {
    for (const dir of MARK_DIRS) {
      const path = join(dir, `isohook-mark-${process.pid}-${randomBytes(8).toString("hex")}`);
      let fd: number | undefined;
      try {
        fd = openSync(path, "wx+", 0o600);
        unlinkSync(path);
        return new RunningMarkFile(fd);
      } catch {
        if (fd !== undefined) closeSync(fd);
      }
    }
    return undefined;
  }

  /** The last mark the worker wrote, or undefined if it wrote none (or the file is closed). */
  read(): RunningMark | undefined {
    if (this.#closed) return undefined;
    try {
      if (readSync(this.fd, this.#bytes, 0, RUNNING_MARK_BYTES, 0) < RUNNING_MARK_BYTES) return undefined;
    } catch {
      return undefined;
    }
    return readRunningMark(this.#view);
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    try {
      closeSync(this.fd);
    } catch {
      // Already closed; nothing to release.
    }
  }
}
