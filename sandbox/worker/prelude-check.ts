import { PreludeError } from "./errors.js";
import * as ivm from "./isolated-vm.js";
import { preludeScript } from "./prelude-script.js";

const PROBE_BUNDLE =
  'var __isohook_bundle = { default: { toolCall(event, ctx) { console.log("seen", event.n); ctx.state.n = event.n; return { type: "block", reason: "r" + event.n }; } } };';
const EXPECTED = '{"kind":"returned","result":{"type":"block","reason":"r7"},"state":{"n":7},"logs":["seen 7"]}';

let verified = false;

/**
 * Runs the prelude once in a scratch isolate and checks one exact reply, so a loader that mangles the
 * prelude's function source fails loudly at the first isolate instead of as odd replies. Once per process.
 */
export function verifyPrelude(): void {
  if (verified) return;
  const isolate = new ivm.Isolate({ memoryLimit: 8 });
  let reply: unknown;
  try {
    const context = isolate.createContextSync();
    const limits = { memoryMb: 8, maxResultChars: 1_024, maxStateChars: 1_024, maxLogLines: 5, maxLogChars: 1_024 };
    const entries = isolate
      .compileScriptSync(preludeScript(limits))
      .runSync(context, { reference: true, timeout: 1_000 });
    const call = entries.getSync(0, { reference: true });
    const adopt = entries.getSync(2, { reference: true });
    isolate.compileScriptSync(PROBE_BUNDLE).runSync(context, { timeout: 1_000 });
    adopt.applySync(undefined, [], { timeout: 1_000 });
    reply = call.applySync(undefined, ["tool.call", '{"n":7}', '{"state":{}}'], { timeout: 1_000 });
  } catch (error) {
    throw new PreludeError(`The guest prelude does not run in an isolate: ${String(error)}. ${HINT}`);
  } finally {
    isolate.dispose();
  }
  if (reply !== EXPECTED) throw new PreludeError(`The guest prelude replied ${JSON.stringify(reply)}. ${HINT}`);
  verified = true;
}

const HINT =
  "Its source is embedded from sandbox/guest/index.ts at run time; a loader transform that injects helpers or coverage instrumentation breaks it";
