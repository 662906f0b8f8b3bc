import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSink } from "../../src/sinks/index.ts";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";

const BIN = new URL("../../bin/recruit-sync.mjs", import.meta.url).pathname;

function cli(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { ...process.env, LOG_LEVEL: "warn", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    child.on("error", reject);
    child.on("exit", (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

describe("recruit-sync export", () => {
  let emu: TestEmulator;
  let dir: string;
  beforeEach(async () => {
    emu = await startTestEmulator();
    dir = await mkdtemp(join(tmpdir(), "recruit-sync-cli-"));
  });
  afterEach(async () => {
    await emu.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("says in one line that the queue needs Redis when it does not answer, and exits 2", async () => {
    const res = await cli(["export", "--job", "nightly-export"], { REDIS_URL: "redis://127.0.0.1:9" });
    expect(res.code).toBe(2);
    expect(res.stderr.trim().split("\n")).toEqual([
      "recruit-sync: Redis does not answer at redis://127.0.0.1:9 (the queues live there; or run with --inline): start redis-server or set REDIS_URL",
    ]);
  });

  it("refuses an unknown resource and a definition without studies with exit 2", async () => {
    const unknown = await cli(["export", "emails", "--inline"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("unknown resource emails");
    const noStudy = await cli(["export", "participants", "--inline"]);
    expect(noStudy.code).toBe(2);
    expect(noStudy.stderr).toContain("add --study ID");
  });

  it("runs a one-off export in-process, prints the report and writes it as JSON", async () => {
    const warehouse = join(dir, "w.duckdb");
    const report = join(dir, "report.json");
    const res = await cli(
      [
        "export",
        "participants",
        "segments",
        "--study",
        "study_1",
        "--study",
        "study_2",
        "--inline",
        "--no-shared-budget",
        "--base-url",
        emu.baseUrl,
        "--warehouse",
        `duckdb:${warehouse}`,
        "--report",
        report,
      ],
      { RECRUIT_SYNC_API_TOKEN: emu.token },
    );
    expect(res.stderr).toBe("");
    expect(res.code).toBe(0);
    // Progress lines first (stdout is a pipe: plain lines), then the report.
    expect(res.stdout).toMatch(/^export: participants 50 rows\/2 pages \(succeeded\)/m);
    expect(res.stdout).toMatch(/^export \S+ \(job adhoc\) → duckdb:.*: succeeded/m);
    const json = JSON.parse(await readFile(report, "utf8"));
    expect(json).toMatchObject({
      runId: expect.any(String),
      durationMs: expect.any(Number),
      resources: {
        participants: { rows: 50, pages: 2, requests: 2 },
        segments: { rows: 30, pages: 1, requests: 1 },
      },
    });
    expect((await stat(report)).mode & 0o777).toBe(0o600);
    const sink = await createSink(`duckdb:${warehouse}`);
    try {
      const runs = await sink.readRuns();
      expect(runs.map((r) => [r.resource, r.status])).toEqual([
        ["participants", "succeeded"],
        ["segments", "succeeded"],
      ]);
    } finally {
      await sink.close();
    }
  });
});
