import path from "node:path";
import { Command, CommanderError } from "commander";
import { ConfigError, outsideFailure, RecruitSyncError } from "../errors/index.ts";
import { commandRegistrars } from "./commands/index.ts";
import { withMend } from "./error-mends.ts";
import { EXIT } from "./exit-codes.ts";
import { isVerbose, setVerbose } from "./verbosity.ts";

export function buildProgram(): Command {
  const program = new Command("recruit-sync")
    .description("Sync worker for a research-recruitment service: CSV imports in, warehouse exports out.")
    .version("0.1.0")
    .option("--config <dir>", "the configuration folder (default: RECRUIT_SYNC_CONFIG_DIR, else ./config)")
    .option("--verbose", "debug logs, and the stack trace of an error (DEBUG=1 does the same)")
    .exitOverride()
    // Usage errors are reported by main as one line with the command's --help.
    .configureOutput({ outputError: () => {} });
  // Every command finds its configuration through the environment, so the flag works wherever it is given.
  program.hook("preAction", (_program, action) => {
    const { config: dir, verbose } = action.optsWithGlobals<{ config?: string; verbose?: boolean }>();
    setVerbose(verbose === true);
    if (dir) process.env.RECRUIT_SYNC_CONFIG_DIR = path.resolve(dir);
  });
  for (const register of commandRegistrars) register(program);
  return program;
}

/** One line that says what is wrong; the stack only with --verbose (or DEBUG) set. */
function report(thrown: unknown, verbose: boolean): void {
  // Redis out of memory or gone, a full disk: what to change, not the library's words.
  const err = outsideFailure(thrown) ?? thrown;
  const raw = err instanceof Error ? err.message : String(err);
  // A message that spans lines (a library's) would break the one-line promise.
  const message = withMend(err, raw.replace(/\s*\n\s*/g, " "));
  process.stderr.write(`recruit-sync: ${message}\n`);
  if (verbose && thrown instanceof Error && thrown.stack) process.stderr.write(`${thrown.stack}\n`);
}

/** Commander's "error: unknown option '--x'" as one line that says where the usage is. */
function reportUsage(err: CommanderError, program: Command, argv: string[]): void {
  const words = argv.slice(2);
  const command = program.commands.find((c) => words.includes(c.name()));
  const help = command ? `recruit-sync ${command.name()} --help` : "recruit-sync --help";
  const message = err.message.replace(/^error: /, "").replace(/\s*\n\s*/g, " ");
  process.stderr.write(`recruit-sync: ${message} (run '${help}' for usage)\n`);
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
      if (err.exitCode === 0) return EXIT.ok;
      // Help shown for want of a command has already been printed.
      if (err.code !== "commander.help" && err.code !== "commander.helpDisplayed") {
        reportUsage(err, program, argv);
      }
      return EXIT.usage;
    }
    report(err, isVerbose() || argv.includes("--verbose"));
    if (err instanceof ConfigError) return EXIT.usage;
    if (err instanceof RecruitSyncError && err.code === "usage") return EXIT.usage;
    return EXIT.jobFailed;
  }
}
