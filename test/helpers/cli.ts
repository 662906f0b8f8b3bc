import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/** The package's command, as users run it. */
export const CLI_BIN = path.resolve(import.meta.dirname, "../../bin/recruit-sync.mjs");

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `recruit-sync ARGS` in a child process and resolves with its exit code
 * and output, whatever the code: the tests assert on failures as much as on
 * successes. `env` is laid over this process's environment.
 */
export async function runCli(
  args: string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number } = {},
): Promise<CliResult> {
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI_BIN, ...args], {
      env: { ...process.env, ...options.env },
      ...(options.cwd ? { cwd: options.cwd } : {}),
      ...(options.timeoutMs ? { timeout: options.timeoutMs } : {}),
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}
