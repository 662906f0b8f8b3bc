import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const BIN = fileURLToPath(new URL("../../bin/recruit-sync.mjs", import.meta.url));

export interface EmulatorChild {
  child: ChildProcessWithoutNullStreams;
  /** Everything written to stdout and stderr so far. */
  output(): string;
  /** Resolves with the banner once printed; rejects when the process exits first. */
  banner(): Promise<string>;
  /** Resolves with the exit code; SIGKILLs the process after `ms` (the code is then null). */
  exit(ms: number): Promise<number | null>;
}

/** `recruit-sync emulator --port 0 …args` in a child process; kill it in afterEach. */
export function startEmulatorChild(args: string[], env: NodeJS.ProcessEnv = {}): EmulatorChild {
  const child = spawn(process.execPath, [BIN, "emulator", "--port", "0", ...args], {
    stdio: "pipe",
    env: { ...process.env, ...env },
  });
  let out = "";
  const waiting = new Set<() => void>();
  const changed = () => {
    for (const w of waiting) w();
  };
  child.stdout.on("data", (d: Buffer) => {
    out += d.toString();
    changed();
  });
  child.stderr.on("data", (d: Buffer) => {
    out += d.toString();
    changed();
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  void exited.then(changed);
  return {
    child,
    output: () => out,
    banner: () =>
      new Promise<string>((resolve, reject) => {
        const check = () => {
          // The banner ends with the stop hint; wait for all of it.
          if (out.includes("Stop with Ctrl-C")) {
            waiting.delete(check);
            resolve(out);
          } else if (child.exitCode !== null || child.signalCode !== null) {
            waiting.delete(check);
            reject(new Error(`emulator exited before its banner: ${out}`));
          }
        };
        waiting.add(check);
        check();
      }),
    exit: async (ms) => {
      const timer = setTimeout(() => child.kill("SIGKILL"), ms);
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
