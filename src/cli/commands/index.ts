import type { Command } from "commander";
import { registerAlertsCommand } from "./alerts.ts";
import { registerDemoCommand } from "./demo.ts";
import { registerEmulatorCommand } from "./emulator.ts";
import { registerExportCommand } from "./export.ts";
import { registerForgetCommand } from "./forget.ts";
import { registerImportCommand } from "./import.ts";
import { registerJobsCommand } from "./jobs.ts";
import { registerOpsCommand } from "./ops.ts";
import { registerRunsCommand } from "./runs.ts";
import { registerWorkerCommand } from "./worker.ts";

/**
 * Every subcommand's registrar. Each command lives in its own file under
 * src/cli/commands/ and exports `register<Name>Command(program)`.
 */
export const commandRegistrars: ReadonlyArray<(program: Command) => void> = [
  registerAlertsCommand,
  registerDemoCommand,
  registerEmulatorCommand,
  registerExportCommand,
  registerForgetCommand,
  registerImportCommand,
  registerJobsCommand,
  registerOpsCommand,
  registerRunsCommand,
  registerWorkerCommand,
];
