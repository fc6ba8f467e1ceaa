/**
 * Show the audit log. Same as `isohook audit`; run with
 * `node --no-node-snapshot --import tsx scripts/hook-audit.ts --help`.
 */
import { runAdminCommand } from "./admin-command.js";

await runAdminCommand("audit");
