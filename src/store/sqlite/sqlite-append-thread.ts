import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import type { DecisionRow } from "../decision-log-store.js";

/**
 * The thread's code, as a string (`eval: true`): a `.ts` file would need tsx in the thread, and this must
 * run the same from sources, tests and dist/. It opens its own connection to the store file (already
 * checked and migrated by the store) and appends each batch in one immediate transaction, at
 * `synchronous = NORMAL` (records are not admin changes: no fsync per batch; WAL keeps them across a
 * process crash, not a power cut).
 */
const THREAD = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.driver);
const db = new Database(workerData.path, { fileMustExist: true, timeout: workerData.busyTimeoutMs });
db.pragma("synchronous = NORMAL");
if (workerData.maxPageCount !== null) db.pragma("max_page_count = " + workerData.maxPageCount);
const insert = db.prepare(
  "INSERT INTO decisions (tenant_id, at, run_id, turn, point, version, bundle_hash, event, event_chars, truncated, " +
    "ctx, record, shadow) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
);
const append = db.transaction((rows) => {
  for (const r of rows) {
    insert.run(r.tenantId, r.at, r.runId, r.turn, r.point, r.version, r.hash, r.event, r.eventChars,
      r.truncated ? 1 : 0, r.ctx, r.record, r.shadow);
  }
});
parentPort.on("message", ({ id, rows }) => {
  try {
    append.immediate(rows);
    parentPort.postMessage({ id, count: rows.length });
  } catch (error) {
    parentPort.postMessage({ id, error: { message: String(error && error.message), code: String(error && error.code) } });
  }
});
`;

interface Reply {
  readonly id: number;
  readonly count?: number;
  readonly error?: { readonly message: string; readonly code: string };
}

/** An error from the thread, with the SQLite code the store's error mapping reads. */
class AppendError extends Error {
  readonly code: string;
  constructor(message: string, code: string) {
    super(message);
    this.code = code;
  }
}

/**
 * Appends decision records on a thread of their own, so the SQLite work of the decision log (about as
 * much CPU per record as a whole host-side hook call) leaves the event loop that runs the hook calls.
 * Started on the first append; unref'd, so it never keeps a process alive.
 */
export class SqliteAppendThread {
  readonly #path: string;
  readonly #busyTimeoutMs: number;
  readonly #maxPageCount: number | null;
  readonly #pending = new Map<number, { resolve: (n: number) => void; reject: (e: Error) => void }>();
  readonly #inFlight = new Set<Promise<number>>();
  #worker: Worker | undefined;
  #nextId = 1;

  constructor(path: string, busyTimeoutMs: number, maxPageCount: number | null) {
    this.#path = path;
    this.#busyTimeoutMs = busyTimeoutMs;
    this.#maxPageCount = maxPageCount;
  }

  append(rows: readonly DecisionRow[]): Promise<number> {
    const worker = this.#started();
    const id = this.#nextId++;
    const done = new Promise<number>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      worker.postMessage({ id, rows });
    });
    this.#inFlight.add(done);
    const forget = () => this.#inFlight.delete(done);
    done.then(forget, forget);
    return done;
  }

  /** Waits for the batches in flight, then stops the thread. */
  async close(): Promise<void> {
    const worker = this.#worker;
    if (worker === undefined) return;
    await Promise.allSettled([...this.#inFlight]);
    this.#worker = undefined;
    await worker.terminate();
  }

  #started(): Worker {
    if (this.#worker !== undefined) return this.#worker;
    const driver = createRequire(import.meta.url).resolve("better-sqlite3");
    const worker = new Worker(THREAD, {
      eval: true,
      workerData: { driver, path: this.#path, busyTimeoutMs: this.#busyTimeoutMs, maxPageCount: this.#maxPageCount },
    });
    worker.unref();
    worker.on("message", (reply: Reply) => {
      const waiting = this.#pending.get(reply.id);
      if (waiting === undefined) return;
      this.#pending.delete(reply.id);
      if (reply.error === undefined) waiting.resolve(reply.count ?? 0);
      else waiting.reject(new AppendError(reply.error.message, reply.error.code));
    });
    const failAll = (error: Error) => {
      for (const { reject } of this.#pending.values()) reject(error);
      this.#pending.clear();
      if (this.#worker === worker) this.#worker = undefined;
    };
    worker.on("error", failAll);
    worker.on("exit", (code) =>
      failAll(new AppendError(`The decision-log writer thread exited (code ${code})`, "EIO")),
    );
    this.#worker = worker;
    return worker;
  }
}
