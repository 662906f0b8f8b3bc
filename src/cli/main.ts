import path from "node:path";
import { Command, CommanderError } from "commander";
import { ConfigError, RecruitSyncError } from "../errors/index.ts";
import { commandRegistrars } from "./commands/index.ts";
import { EXIT } from "./exit-codes.ts";

export function buildProgram(): Command {
  const program = new Command("recruit-sync")
    .description("Sync worker for a research-recruitment service: CSV imports in, warehouse exports out.")
    .version("0.1.0")
    .option("--config <dir>", "the configuration folder (default: RECRUIT_SYNC_CONFIG_DIR, else ./config)")
    .exitOverride()
    .showHelpAfterError("(run with --help for usage)");
  // Every command finds its configuration through the environment, so the flag works wherever it is given.
  program.hook("preAction", (_program, action) => {
    const dir = action.optsWithGlobals<{ config?: string }>().config;
    if (dir) process.env.RECRUIT_SYNC_CONFIG_DIR = path.resolve(dir);
  });
  for (const register of commandRegistrars) register(program);
  return program;
}

/** One line that says what is wrong; the stack only with DEBUG set. */
function report(err: unknown): void {
  const message = err instanceof Error ? err.message : String(err);
  process.stderr.write(`recruit-sync: ${message}\n`);
  if (process.env.DEBUG && err instanceof Error && err.stack) process.stderr.write(`${err.stack}\n`);
}

/** Runs the command line and resolves to the process exit code. */
export async function main(argv: string[]): Promise<number> {
  // Nearly everything this tool writes holds people's data (warehouse, its WAL, spills, rejects, reports):
  // owner-only from the start, whatever the folder's mode and whichever library opens the file.
  process.umask(0o077);
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
    return EXIT.ok;
  } catch (err) {
    if (err instanceof CommanderError) {
      // Help and version are exits with code 0; anything else is bad usage.
      return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    report(err);
    if (err instanceof ConfigError) return EXIT.usage;
    if (err instanceof RecruitSyncError && err.code === "usage") return EXIT.usage;
    return EXIT.jobFailed;
  }
}
