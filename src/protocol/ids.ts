import { z } from "zod";

/**
 * Branded ids: strings that are easy to confuse (a tenant id passed where a hook id belongs) are distinct
 * types. Tenant and hook ids are restricted to a path- and SQL-safe alphabet because they appear in store
 * keys, file names of reports and log lines.
 */
const SAFE_ID = /^[a-z0-9][a-z0-9._-]{0,63}$/;

export const TenantId = z
  .string()
  .regex(
    SAFE_ID,
    "Expected a tenant id of 1–64 characters: lowercase letters, digits, '.', '_' or '-', starting with a letter or digit",
  )
  .brand<"TenantId">();
export type TenantId = z.infer<typeof TenantId>;

export const HookId = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:@/-]*$/, "Expected a hook id of letters, digits and . _ : @ / -")
  .brand<"HookId">();
export type HookId = z.infer<typeof HookId>;

/** A bundle's content hash: `sha256-` followed by 64 lowercase hex digits. */
export const BundleHash = z
  .string()
  .regex(/^sha256-[0-9a-f]{64}$/, "Expected a bundle hash of the form sha256-<64 hex digits>")
  .brand<"BundleHash">();
export type BundleHash = z.infer<typeof BundleHash>;

/** What a run id may be: it lands in store rows (PostgreSQL text cannot hold NUL), log lines and terminals. */
export const RUN_ID_RULE = "1–128 characters, none of them a control character (NUL, ESC, …) or a lone surrogate";
/** `\p{Cs}` under the `u` flag matches only lone surrogates. */
const CONTROL_OR_LONE_SURROGATE = /[\p{Cc}\p{Cs}]/u;

export const RunId = z
  .string()
  .min(1)
  .max(128)
  .refine((id) => !CONTROL_OR_LONE_SURROGATE.test(id), `Expected a run id of ${RUN_ID_RULE}`)
  .brand<"RunId">();
export type RunId = z.infer<typeof RunId>;
