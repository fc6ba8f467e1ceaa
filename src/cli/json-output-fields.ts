import { z } from "zod";
import { HOOK_POINT_NAMES, type HookPoint } from "../protocol/index.js";

/** The fields every command's `--json` output shares, so the same thing has one name and one shape. */

export const Version = z.int().positive().meta({ description: "a bundle version number" });
export const Hash = z.string().regex(/^sha256-[0-9a-f]{64}$/);
export const Iso = z.iso.datetime().meta({ description: "ISO 8601 time" });
export const Point = z.enum(HOOK_POINT_NAMES as [HookPoint, ...HookPoint[]]);
export const Logs = z.array(z.string()).meta({ description: "console lines the hook logged" });
export const Count = z.int().nonnegative();
