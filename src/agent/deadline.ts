/** A signal that aborts when `parent` does or `ms` after creation; `dispose` clears the timer and listener. */
export interface Deadline {
  readonly signal: AbortSignal;
  timedOut(): boolean;
  dispose(): void;
}

export function deadline(parent: AbortSignal, ms: number): Deadline {
  const controller = new AbortController();
  let timedOut = false;
  const onAbort = () => controller.abort(parent.reason);
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new Error(`timed out after ${ms} ms`));
  }, ms);
  timer.unref();
  if (parent.aborted) onAbort();
  else parent.addEventListener("abort", onAbort, { once: true });
  return {
    signal: controller.signal,
    timedOut: () => timedOut,
    dispose() {
      clearTimeout(timer);
      parent.removeEventListener("abort", onAbort);
    },
  };
}
