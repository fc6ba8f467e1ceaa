/**
 * Create the bundle store or bring its schema up to date. Same as `isohook migrate`; run with
 * `node --import tsx scripts/migrate-store.ts --store postgres://… [--json]`.
 */
import { runAdminCommand } from "./admin-command.js";

await runAdminCommand("migrate");
