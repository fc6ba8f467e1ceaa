import type { Command } from "../command.js";
import { activateCommand } from "./activate.js";
import { auditCommand } from "./audit.js";
import { bundleCommand } from "./bundle.js";
import { decisionsCommand } from "./decisions.js";
import { demoCommand } from "./demo.js";
import { fuzzCommand } from "./fuzz.js";
import { initCommand } from "./init.js";
import { inspectCommand } from "./inspect.js";
import { listCommand } from "./list.js";
import { logCommand } from "./log.js";
import { migrateCommand } from "./migrate.js";
import { quarantineCommand } from "./quarantine.js";
import { replayCommand } from "./replay.js";
import { rollbackCommand } from "./rollback.js";
import { rolloutCommand } from "./rollout.js";
import { runCommand } from "./run.js";
import { schemaCommand } from "./schema.js";
import { shadowCommand } from "./shadow.js";
import { shadowReportCommand } from "./shadow-report.js";
import { statsCommand } from "./stats.js";
import { testCommand } from "./test.js";
import { uploadCommand } from "./upload.js";
import { versionsCommand } from "./versions.js";

/** Every `isohook` command, in the order `isohook --help` lists them. Add one line per command. */
export const COMMANDS: readonly Command[] = [
  initCommand,
  bundleCommand,
  testCommand,
  uploadCommand,
  fuzzCommand,
  listCommand,
  versionsCommand,
  activateCommand,
  rollbackCommand,
  rolloutCommand,
  shadowCommand,
  shadowReportCommand,
  quarantineCommand,
  inspectCommand,
  auditCommand,
  logCommand,
  decisionsCommand,
  replayCommand,
  migrateCommand,
  runCommand,
  demoCommand,
  statsCommand,
  schemaCommand,
];
