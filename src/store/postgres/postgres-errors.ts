import { StoreError } from "../errors.js";

/** SQLSTATE classes and codes that mean the server or the connection is gone, not that the request was wrong. */
const UNAVAILABLE_STATES = /^(08...|57P0[123]|53300)$/;
const UNAVAILABLE_ERRNOS = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EPIPE",
  "ENOENT",
]);

/** Turns a node-postgres error into a StoreError that says what to do next; `where` is the redacted URL. */
export function pgStoreError(error: unknown, where: string): StoreError {
  if (error instanceof StoreError) return error;
  const code = errorCode(error);
  const detail = error instanceof Error ? error.message : String(error);
  if (isUnavailable(error)) return unavailable(where, detail, error);
  if (code === "53100") {
    return new StoreError(
      "full",
      `The PostgreSQL store at ${where} is out of disk space (${detail}). Free space on the server and retry; nothing was written.`,
      { cause: error },
    );
  }
  if (code === "42501" || code === "25006") {
    return new StoreError(
      "read_only",
      `The database user may not do this in the PostgreSQL store at ${where} (${detail}). Grant it the privileges on the schema, or run \`isohook migrate\` as its owner.`,
      { cause: error },
    );
  }
  if (code === "40001" || code === "40P01" || code === "55P03" || code === "57014") {
    return new StoreError(
      "busy",
      `The PostgreSQL store at ${where} could not finish the change (${detail}). Nothing was written; retry.`,
      { cause: error },
    );
  }
  if (code === "42P01" || code === "42703" || code.startsWith("XX")) {
    return new StoreError(
      "corrupt",
      `The PostgreSQL store at ${where} is damaged (${detail}). Nothing was changed. Restore the schema from a backup.`,
      { cause: error },
    );
  }
  return new StoreError("io", `The PostgreSQL store at ${where} failed: ${detail}. Check the server's log and retry.`, {
    cause: error,
  });
}

export function unavailable(where: string, detail: string, cause?: unknown): StoreError {
  return new StoreError(
    "unavailable",
    `Cannot reach the PostgreSQL store at ${where} (${detail}). Check that the server is running and the URL is right, then retry.`,
    { cause },
  );
}

function isUnavailable(error: unknown): boolean {
  const code = errorCode(error);
  if (UNAVAILABLE_STATES.test(code) || UNAVAILABLE_ERRNOS.has(code)) return true;
  // node-postgres reports a dropped socket and a connect timeout as plain Errors; a database that refuses
  // connections for now (ALLOW_CONNECTIONS false, 55000) is down for isohook too.
  const message = error instanceof Error ? error.message : "";
  return /Connection terminated|connection timeout|Client has encountered a connection error|timeout exceeded when trying to connect|is not currently accepting connections/i.test(
    message,
  );
}

function errorCode(error: unknown): string {
  if (typeof error === "object" && error !== null && "code" in error && typeof error.code === "string")
    return error.code;
  return "";
}
