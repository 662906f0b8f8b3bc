import { Command, CommanderError } from "commander";
import { ConfigError, RecruitSyncError } from "../errors/index.ts";
import { commandRegistrars } from "./commands/index.ts";
import { EXIT } from "./exit-codes.ts";

export function buildProgram(): Command {
  const program = new Command("recruit-sync")
    .description("Sync worker for a research-recruitment service: CSV imports in, warehouse exports out.")
    .version("0.1.0")
    .exitOverride()
    .showHelpAfterError("(run with --help for usage)");
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
