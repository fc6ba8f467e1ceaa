import { z } from "zod";
import type { Model } from "../../src/agent/index.js";
import {
  defineTool,
  type ModelRequest,
  type ScriptedTurnInput,
  scriptedModel,
  type Tool,
} from "../../src/agent/index.js";

/** A scripted model that also keeps every request it was sent. */
export function recordingModel(turns: ScriptedTurnInput[]): Model & { requests: ModelRequest[] } {
  const inner = scriptedModel(turns);
  const requests: ModelRequest[] = [];
  return {
    id: inner.id,
    requests,
    complete(request, signal) {
      requests.push(structuredClone(request));
      return inner.complete(request, signal);
    },
  };
}

/** A `shell` tool that records what it ran. */
export function shellTool(ran: { command: string; cwd?: string | undefined }[] = []): Tool {
  return defineTool({
    name: "shell",
    description: "Runs a shell command",
    parameters: z.object({ command: z.string(), cwd: z.string().optional() }),
    async execute({ command, cwd }) {
      ran.push({ command, cwd });
      return `ran ${command}${cwd ? ` in ${cwd}` : ""}`;
    },
  });
}

export function readTool(content = "file contents"): Tool {
  return defineTool({
    name: "read",
    description: "Reads a file",
    parameters: z.object({ path: z.string() }),
    execute: async () => content,
  });
}

export const call = (name: string, args: Record<string, string | number>) => ({ name, args });
