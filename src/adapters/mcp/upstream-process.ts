import { type ChildProcessByStdio, spawn } from "node:child_process";
import type { Readable, Writable } from "node:stream";
import { getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { type JSONRPCMessage, JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js";

/** How long a closed upstream gets to exit on SIGTERM before SIGKILL. */
const KILL_GRACE_MS = 2_000;

export interface UpstreamProcessOptions {
  /** A line (one JSON-RPC message) longer than this closes the upstream: it is lying or broken. */
  readonly maxMessageChars: number;
  /** Where the upstream's stderr goes, line by line; default: dropped. */
  readonly onStderr?: (line: string) => void;
  readonly cwd?: string;
}

/**
 * An upstream MCP server run as a child process, spoken to over its stdio (newline-delimited JSON-RPC).
 * Unlike a plain stdio transport it caps each message, drops lines that are not JSON-RPC (reported through
 * `onerror`, so a pending call fails by its timeout rather than on garbage), gives the child only the
 * SDK's safe default environment (never the gateway's secrets), and kills it on close.
 */
export class UpstreamProcess implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  readonly #command: string;
  readonly #args: readonly string[];
  readonly #options: UpstreamProcessOptions;
  #child: ChildProcessByStdio<Writable, Readable, Readable> | undefined;
  #buffer = "";
  #closed = false;

  constructor(command: string, args: readonly string[], options: UpstreamProcessOptions) {
    this.#command = command;
    this.#args = args;
    this.#options = options;
  }

  /** The child's process id once started. */
  get pid(): number | undefined {
    return this.#child?.pid;
  }

  start(): Promise<void> {
    return new Promise((resolve, reject) => {
      const child = spawn(this.#command, [...this.#args], {
        stdio: ["pipe", "pipe", "pipe"],
        env: getDefaultEnvironment(),
        ...(this.#options.cwd === undefined ? {} : { cwd: this.#options.cwd }),
      });
      this.#child = child;
      child.once("spawn", () => resolve());
      child.once("error", (error) => {
        reject(new Error(`Could not start the upstream \`${this.#command}\`: ${error.message}`));
        this.#finish();
      });
      child.once("exit", () => this.#finish());
      child.stdin.on("error", (error) => this.onerror?.(error));
      child.stdout.setEncoding("utf8");
      child.stdout.on("data", (chunk: string) => this.#read(chunk));
      child.stderr.setEncoding("utf8");
      child.stderr.on("data", (chunk: string) => {
        for (const line of chunk.split("\n")) if (line !== "") this.#options.onStderr?.(line);
      });
    });
  }

  #read(chunk: string): void {
    this.#buffer += chunk;
    let newline = this.#buffer.indexOf("\n");
    while (newline !== -1) {
      const line = this.#buffer.slice(0, newline).replace(/\r$/, "");
      this.#buffer = this.#buffer.slice(newline + 1);
      if (line.trim() !== "") this.#parse(line);
      newline = this.#buffer.indexOf("\n");
    }
    if (this.#buffer.length > this.#options.maxMessageChars) {
      this.#buffer = "";
      this.onerror?.(new Error(`the upstream sent a message over ${this.#options.maxMessageChars} characters`));
      void this.close();
    }
  }

  #parse(line: string): void {
    if (line.length > this.#options.maxMessageChars) {
      this.onerror?.(new Error(`the upstream sent a message over ${this.#options.maxMessageChars} characters`));
      void this.close();
      return;
    }
    let message: JSONRPCMessage;
    try {
      message = JSONRPCMessageSchema.parse(JSON.parse(line));
    } catch {
      this.onerror?.(new Error(`the upstream wrote a line that is not JSON-RPC: ${line.slice(0, 80)}`));
      return;
    }
    this.onmessage?.(message);
  }

  send(message: JSONRPCMessage): Promise<void> {
    const child = this.#child;
    if (child === undefined || this.#closed) return Promise.reject(new Error("the upstream is not running"));
    return new Promise((resolve) => {
      if (child.stdin.write(`${JSON.stringify(message)}\n`)) resolve();
      else child.stdin.once("drain", () => resolve());
    });
  }

  async close(): Promise<void> {
    const child = this.#child;
    if (child !== undefined && child.exitCode === null && child.signalCode === null) {
      child.stdin.end();
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), KILL_GRACE_MS);
      timer.unref();
      child.once("exit", () => clearTimeout(timer));
    }
    this.#finish();
  }

  #finish(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.onclose?.();
  }
}
