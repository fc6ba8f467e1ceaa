import { watch } from "node:fs/promises";
import { setTimeout as delay } from "node:timers/promises";

/** Saves usually come as a burst of events (write, rename, chmod): one re-run per burst. */
const SETTLE_MS = 100;

/**
 * Yields once per burst of changes under `dir` (recursively, `node_modules` and dot-folders ignored) until
 * `signal` aborts. For `isohook test --watch`.
 */
export async function* folderChanges(dir: string, signal: AbortSignal): AsyncGenerator<void> {
  let changed = false;
  let closed = false;
  let wake: (() => void) | undefined;
  const notify = () => {
    wake?.();
    wake = undefined;
  };
  void (async () => {
    try {
      for await (const event of watch(dir, { recursive: true, signal })) {
        const name = event.filename ?? "";
        if (/(^|[/\\])(node_modules|\.[^/\\]+)([/\\]|$)/.test(name)) continue;
        changed = true;
        notify();
      }
    } catch {
      // Aborted, or the folder went away: either way the watch is over.
    } finally {
      closed = true;
      notify();
    }
  })();
  signal.addEventListener("abort", notify, { once: true });
  while (!signal.aborted && !closed) {
    if (!changed) await new Promise<void>((resolve) => (wake = resolve));
    if (signal.aborted || closed) return;
    await delay(SETTLE_MS, undefined, { signal }).catch(() => undefined);
    if (signal.aborted) return;
    changed = false;
    yield;
  }
}
