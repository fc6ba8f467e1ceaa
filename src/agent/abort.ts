/**
 * A signal that aborts when `parent` does or `ms` after creation (or after the last `restart`, for an idle
 * limit); `dispose` clears the timer and listener.
 */
export interface Deadline {
  readonly signal: AbortSignal;
  timedOut(): boolean;
  /** Starts the `ms` over (a stream that just made progress). */
  restart(): void;
  dispose(): void;
}

export function deadline(parent: AbortSignal, ms: number): Deadline {
  const controller = new AbortController();
  let timedOut = false;
  const onAbort = () => controller.abort(parent.reason);
  const expire = () => {
    timedOut = true;
    controller.abort(new Error(`timed out after ${ms} ms`));
  };
  let timer = setTimeout(expire, ms);
  timer.unref();
  if (parent.aborted) onAbort();
  else parent.addEventListener("abort", onAbort, { once: true });
  return {
    signal: controller.signal,
    timedOut: () => timedOut,
    restart() {
      if (controller.signal.aborted) return;
      clearTimeout(timer);
      timer = setTimeout(expire, ms);
      timer.unref();
    },
    dispose() {
      clearTimeout(timer);
      parent.removeEventListener("abort", onAbort);
    },
  };
}

/**
 * Settles with `promise`, or rejects with the signal's reason as soon as it aborts: code the loop calls
 * (tools, models) may ignore its signal, the loop must not wait for it.
 */
export function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    // Its late rejection is no longer anyone's business, but must not go unhandled.
    promise.catch(() => {});
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}
