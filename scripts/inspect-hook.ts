/**
 * Show one version: manifest, hook points, size, config, gate report. Same as `isohook inspect`; run with
 * `node --no-node-snapshot --import tsx scripts/inspect-hook.ts --help`.
 */
import { runAdminCommand } from "./admin-command.js";

await runAdminCommand("inspect");
