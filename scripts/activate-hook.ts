/**
 * Make one of a tenant's stored versions the active one. Same as `isohook activate`; run with
 * `node --no-node-snapshot --import tsx scripts/activate-hook.ts --help`.
 */
import { runAdminCommand } from "./admin-command.js";

await runAdminCommand("activate");
