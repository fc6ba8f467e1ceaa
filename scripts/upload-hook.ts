/**
 * Bundle a hook module, run the deploy gate and store it as a new version. Same as `isohook upload`; run with
 * `node --no-node-snapshot --import tsx scripts/upload-hook.ts --help`.
 */
import { runAdminCommand } from "./admin-command.js";

await runAdminCommand("upload");
