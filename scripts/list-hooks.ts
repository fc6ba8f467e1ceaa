/**
 * List tenants with their active and latest versions. Same as `isohook list`; run with
 * `node --no-node-snapshot --import tsx scripts/list-hooks.ts --help`.
 */
import { runAdminCommand } from "./admin-command.js";

await runAdminCommand("list");
