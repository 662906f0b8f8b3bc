import { execFile } from "node:child_process";
import { chmod, mkdtemp, readdir, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import { type TestProject, testProject } from "../queue/runtime-fixture.ts";

const run = promisify(execFile);
const bin = path.resolve("bin/recruit-sync.mjs");

/** Runs the CLI under `umask 022`, as a login shell would leave it. */
async function cli(args: string[], env: Record<string, string>, input?: string) {
  const quoted = [process.execPath, bin, ...args].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(" ");
  const command = input === undefined ? `umask 022; ${quoted}` : `umask 022; cat '${input}' | ${quoted}`;
  try {
    const r = await run("/bin/sh", ["-c", command], { env: { ...process.env, NODE_ENV: "", ...env } });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

async function modes(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const name of await readdir(dir, { recursive: true })) {
    const s = await stat(path.join(dir, String(name)));
    if (s.isFile()) out[String(name)] = (s.mode & 0o777).toString(8);
  }
  return out;
}

describe("files that hold people's data", () => {
  let emu: TestEmulator;
  let dir: string;
  let project: TestProject;
  beforeAll(async () => {
    emu = await startTestEmulator();
    dir = await mkdtemp(path.join(tmpdir(), "recruit-sync-modes-"));
    await chmod(dir, 0o755);
    project = await testProject({ baseUrl: emu.baseUrl, token: emu.token });
  });
  afterAll(async () => {
    await project.cleanup();
    await emu.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("are owner-only in a 0755 folder under umask 022: warehouse, rejects, report, spool of standard input", async () => {
    const env = {
      ...project.env,
      RECRUIT_SYNC_WAREHOUSE: `duckdb:${path.join(dir, "wh", "warehouse.duckdb")}`,
    };
    const imported = await cli(
      [
        "import",
        "-",
        "--job",
        "hubspot-contacts",
        "--inline",
        "--rejects",
        path.join(dir, "r.rejects.csv"),
        "--report",
        path.join(dir, "report.json"),
      ],
      env,
      path.resolve("samples/hubspot-contacts.csv"),
    );
    expect(imported.stderr).toBe("");
    expect(imported.code).toBe(0);
    expect(imported.stdout).toContain("13 rows read");
    const exported = await cli(
      ["export", "segments", "--inline", "--warehouse", `file:${path.join(dir, "parts")}`],
      env,
    );
    expect(exported.code).toBe(0);
    const duck = await cli(["export", "segments", "--inline"], env);
    expect(duck.code).toBe(0);
    const found = await modes(dir);
    expect(Object.keys(found)).toEqual(
      expect.arrayContaining(["r.rejects.csv", "report.json", "wh/warehouse.duckdb"]),
    );
    expect(Object.keys(found).some((f) => f.startsWith("parts/"))).toBe(true);
    for (const [file, mode] of Object.entries(found)) expect(`${file} ${mode}`).toBe(`${file} 600`);
  });
});
