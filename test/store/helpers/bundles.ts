import { createHash } from "node:crypto";
import { BundleHash, type BundleManifest, type HookPoint, SDK_VERSION } from "../../../src/protocol/index.js";

/** A made-up but self-consistent bundle (code, hash, manifest) for store tests; no bundler needed. */
export function fakeBundle(
  label: string,
  hookPoints: HookPoint[] = ["tool.call"],
): { code: string; sourceMap: string; manifest: BundleManifest } {
  const code = `var __isohook_bundle = { default: { /* ${label} */ } };`;
  const hash = BundleHash.parse(`sha256-${createHash("sha256").update(code, "utf8").digest("hex")}`);
  return {
    code,
    sourceMap: JSON.stringify({ version: 3, sources: [`${label}.ts`], mappings: "" }),
    manifest: {
      hash,
      bytes: Buffer.byteLength(code, "utf8"),
      hookPoints,
      sdkVersion: SDK_VERSION,
      entry: `${label}/index.ts`,
    },
  };
}
