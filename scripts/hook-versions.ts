/**
 * List a tenant's versions. Same as `isohook versions`; run with
 * `node --no-node-snapshot --import tsx scripts/hook-versions.ts --help`.
 */
import { runAdminCommand } from "./admin-command.js";

await runAdminCommand("versions");
