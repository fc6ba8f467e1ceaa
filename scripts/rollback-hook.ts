/**
 * Return a tenant to the version that was active before. Same as `isohook rollback`; run with
 * `node --no-node-snapshot --import tsx scripts/rollback-hook.ts --help`.
 */
import { runAdminCommand } from "./admin-command.js";

await runAdminCommand("rollback");
