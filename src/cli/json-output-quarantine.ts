import { z } from "zod";
import { Count, Hash, Iso, Version } from "./json-output-fields.js";

/** One bundle's quarantine, shared by every host on the store (`isohook quarantine`). */
export const QuarantineEntry = z.strictObject({
  tenantId: z.string(),
  hash: Hash,
  versions: z.array(Version).meta({ description: "the tenant's versions that run this bundle" }),
  strike: z.int().positive().meta({ description: "how many times it entered quarantine (the cooldown doubles)" }),
  failures: Count.meta({ description: "the failures (weights summed) that put it there" }),
  codes: z.array(z.string()),
  since: Iso,
  until: Iso,
  hosts: z.array(z.string()).meta({ description: "the hosts whose failures put it there" }),
  releasedAt: Iso.nullable(),
  releasedBy: z.string().nullable(),
});
