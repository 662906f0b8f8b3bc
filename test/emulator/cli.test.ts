import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";

const BIN = fileURLToPath(new URL("../../bin/recruit-sync.mjs", import.meta.url));
const children: ChildProcessWithoutNullStreams[] = [];

afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill("SIGKILL");
});

function start(args: string[]): { child: ChildProcessWithoutNullStreams; output: () => string } {
  const child = spawn(process.execPath, [BIN, "emulator", ...args], { stdio: "pipe" });
  children.push(child);
  let out = "";
  child.stdout.on("data", (d: Buffer) => {
    out += d.toString();
  });
  child.stderr.on("data", (d: Buffer) => {
    out += d.toString();
  });
  return { child, output: () => out };
}

async function baseUrlOf(child: ChildProcessWithoutNullStreams, output: () => string): Promise<string> {
  for (;;) {
    // The banner ends with the stop hint; wait for all of it.
    const m = /Emulator listening: (\S+)/.exec(output());
    if (m?.[1] && output().includes("Stop with Ctrl-C")) return m[1];
    if (child.exitCode !== null) throw new Error(`emulator exited: ${output()}`);
    await once(child.stdout, "data");
  }
}

describe("recruit-sync emulator", () => {
  it("prints its base URL and tokens, serves, and saves --state when stopped with SIGTERM", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "emulator-cli-"));
    try {
      const state = path.join(dir, "state.jsonl");
      const { child, output } = start([
        "--port",
        "0",
        "--people",
        "20",
        "--token",
        "cli-token",
        "--state",
        state,
      ]);
      const baseUrl = await baseUrlOf(child, output);
      expect(baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/public\/v1$/);
      expect(output()).toContain("cli-token");
      const res = await fetch(`${baseUrl}/segments/search`, {
        method: "POST",
        headers: { authorization: "Bearer cli-token", "content-type": "application/json" },
        body: "{}",
      });
      expect(res.status).toBe(200);
      expect(res.headers.get("x-ratelimit-limit")).toBe("600");
      child.kill("SIGTERM");
      const [code] = await once(child, "exit");
      expect(code).toBe(0);
      expect((await stat(state)).size).toBeGreaterThan(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("exits with code 2 and one line for a bad flag", async () => {
    for (const args of [
      ["--rate-limit", "lots"],
      ["--token", "t:fly"],
      ["--people", "-3"],
      ["--reset-unit", "hours"],
    ]) {
      const { child, output } = start(["--port", "0", ...args]);
      const [code] = await once(child, "exit");
      expect(code, args.join(" ")).toBe(2);
      expect(output()).toMatch(/^recruit-sync: /);
    }
  });
});
