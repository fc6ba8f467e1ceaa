import { z } from "zod";
import { BundleHash } from "./ids.js";

/**
 * A bundle's identity wherever it is named: in a hook's `ctx`, in provenance records and events. `hash` is
 * the content (what the sandbox loads by); `version` is the tenant's upload number in the store (0 for a
 * bundle that was never stored, e.g. `isohook test`).
 */
export const BundleRef = z.strictObject({ version: z.number().int().nonnegative(), hash: BundleHash });
export type BundleRef = z.infer<typeof BundleRef>;
