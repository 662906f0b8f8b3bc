import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";

const FIXTURE = new URL("./fixtures/hold-duckdb.ts", import.meta.url).pathname;

export interface DuckDbHolder {
  child: ChildProcess;
  pid: number;
  /** Kills the process and waits for it: the file is free after. */
  close(): Promise<void>;
}

/**
 * Another process (a node process with @duckdb/node-api, as an analyst's
 * notebook would be) holding `file` open, read-only or not; resolves once
 * the file is open.
 */
export async function holdDuckDbFile(
  file: string,
  options: { readOnly?: boolean } = {},
): Promise<DuckDbHolder> {
  const child = spawn(process.execPath, ["--import", "tsx", FIXTURE], {
    env: { ...process.env, HOLD_FILE: file, HOLD_READ_ONLY: options.readOnly ? "1" : "" },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const exited = once(child, "exit");
  const close = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGKILL");
      await exited;
    }
  };
  try {
    const [line] = (await Promise.race([
      once(createInterface({ input: child.stdout! }), "line"),
      exited.then(([code]) => {
        throw new Error(`the DuckDB holder exited (${code}) before it opened ${file}`);
      }),
    ])) as [string];
    if (line !== "open") throw new Error(`the DuckDB holder said ${line}`);
  } catch (err) {
    await close();
    throw err;
  }
  return { child, pid: child.pid ?? 0, close };
}
