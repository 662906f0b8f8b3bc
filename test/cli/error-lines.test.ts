import { randomUUID } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliResult, runCli } from "../helpers/cli.ts";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import { REDIS_URL } from "../helpers/env.ts";

const repoJobs = path.resolve("jobs");
const sample = (name: string) => path.resolve("samples", name);

/** A project of its own: config/default.yaml in a temp folder, data beside it. */
function tempProject(options: { baseUrl?: string; jobsDir?: string } = {}): { dir: string; config: string } {
  const dir = mkdtempSync(path.join(tmpdir(), "recruit-sync-errors-"));
  mkdirSync(path.join(dir, "config"));
  writeFileSync(
    path.join(dir, "config", "default.yaml"),
    [
      `service: { baseUrl: "${options.baseUrl ?? "http://127.0.0.1:9/api/public/v1"}" }`,
      `redis: { url: "${REDIS_URL}", prefix: "test-${randomUUID()}" }`,
      `warehouse: { url: "duckdb:./data/warehouse.duckdb" }`,
      `paths: { jobsDir: "${options.jobsDir ?? repoJobs}", dataDir: ./data }`,
      "",
    ].join("\n"),
  );
  return { dir, config: path.join(dir, "config") };
}

function cli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  return runCli(args, {
    env: {
      NODE_ENV: "",
      RECRUIT_SYNC_CONFIG_DIR: "",
      RECRUIT_SYNC_BASE_URL: "",
      LOG_LEVEL: "silent",
      ...env,
    },
  });
}

/** The one line the CLI printed on stderr; fails when there were more, or a stack. */
function oneLine(r: CliResult): string {
  const lines = r.stderr.trim().split("\n");
  expect(lines).toHaveLength(1);
  expect(r.stderr).not.toMatch(/^\s+at /m);
  return lines[0] as string;
}

const dirs: string[] = [];
function track<T extends { dir: string }>(p: T): T {
  dirs.push(p.dir);
  return p;
}
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe("one line for each error of the job definitions", () => {
  it("jobs list prints every entry, INVALID ones too, and exits 2 when any is invalid", async () => {
    const jobs = track({ dir: mkdtempSync(path.join(tmpdir(), "recruit-sync-jobs-")) });
    writeFileSync(path.join(jobs.dir, "good.yaml"), "kind: opt-out\n");
    writeFileSync(path.join(jobs.dir, "bad.yaml"), "kind: teleport\n");
    const r = await cli(["jobs", "list", "--dir", jobs.dir]);
    expect(r.code).toBe(2);
    expect(r.stdout).toMatch(/^good +opt-out +opt-out list$/m);
    expect(r.stdout).toMatch(/^bad +INVALID /m);
    expect(oneLine(r)).toBe(
      "recruit-sync: 1 of 2 job definitions are invalid: run 'recruit-sync jobs validate' for each problem",
    );
  });

  it("jobs list exits 0 when every definition is valid", async () => {
    const r = await cli(["jobs", "list", "--dir", repoJobs]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("");
  });

  it("jobs validate --dir on a missing folder names the folder instead of printing ENOENT", async () => {
    const missing = path.join(tmpdir(), `recruit-sync-missing-${randomUUID()}`);
    const r = await cli(["jobs", "validate", "--dir", missing]);
    expect(r.code).toBe(2);
    expect(oneLine(r)).toBe(
      `recruit-sync: the jobs folder ${missing} does not exist: give --dir a folder of job definitions (*.yaml), or set paths.jobsDir in config/default.yaml`,
    );
    expect(r.stderr).not.toContain("ENOENT");
  });

  it("jobs list --dir on a file says it is not a folder", async () => {
    const r = await cli(["jobs", "list", "--dir", sample("opt-out-list.csv")]);
    expect(r.code).toBe(2);
    expect(oneLine(r)).toMatch(/the jobs folder .*opt-out-list\.csv is a file, not a folder/);
  });

  it("a YAML syntax error in a job file gives its position, the reason and the line it points at", async () => {
    const jobs = track({ dir: mkdtempSync(path.join(tmpdir(), "recruit-sync-jobs-")) });
    writeFileSync(path.join(jobs.dir, "broken.yaml"), "kind: import\nname: a: b\n");
    const r = await cli(["jobs", "validate", "--dir", jobs.dir]);
    expect(r.code).toBe(2);
    const problem = r.stdout.trim().split("\n");
    expect(problem).toEqual([
      `invalid  ${path.relative(process.cwd(), path.join(jobs.dir, "broken.yaml"))}: (top): not valid YAML at line 2, column 7: Nested mappings are not allowed in compact mappings (line 2: "name: a: b")`,
    ]);
  });

  it("an unclosed bracket at the end of the file points at the line that opened it", async () => {
    const p = track(tempProject());
    const file = path.join(p.dir, "unclosed.yaml");
    writeFileSync(file, "kind: import\ntarget: { studyId: study_1\n");
    const r = await cli([
      "--config",
      p.config,
      "import",
      sample("opt-out-list.csv"),
      "--job",
      file,
      "--inline",
    ]);
    expect(r.code).toBe(2);
    const line = oneLine(r);
    expect(line).toMatch(/^recruit-sync: .*unclosed\.yaml: not valid YAML at line \d+, column \d+: .+/);
    expect(line).toContain('(line 2: "target: { studyId: study_1")');
  });

  it("a YAML syntax error in the configuration is one line, without the password of a URL on that line", async () => {
    const p = track(tempProject());
    writeFileSync(path.join(p.config, "default.yaml"), "warehouse:\n  url: postgres://sync:s3cret@db/w: x\n");
    const r = await cli(["--config", p.config, "jobs", "list"]);
    expect(r.code).toBe(2);
    expect(oneLine(r)).toBe(
      `recruit-sync: ${path.join(p.config, "default.yaml")}: not valid YAML at line 2, column 8: Nested mappings are not allowed in compact mappings (line 2: "url: postgres://sync:***@db/w: x")`,
    );
  });

  it("an unknown job name points to jobs list, for imports and exports", async () => {
    const p = track(tempProject());
    const imp = await cli([
      "--config",
      p.config,
      "import",
      sample("opt-out-list.csv"),
      "--job",
      "nope",
      "--inline",
    ]);
    expect(imp.code).toBe(2);
    expect(oneLine(imp)).toMatch(
      /no job definition nope: .* \(run 'recruit-sync jobs list' to see the jobs\)$/,
    );
    const exp = await cli(["--config", p.config, "export", "--job", "nope", "--inline"]);
    expect(exp.code).toBe(2);
    expect(oneLine(exp)).toMatch(
      /job nope .*: no such job file \(run 'recruit-sync jobs list' to see the jobs\)$/,
    );
  });
});

describe("one line when the service's address is wrong", () => {
  let emu: TestEmulator;
  beforeAll(async () => {
    emu = await startTestEmulator({ sizes: { people: 20 } });
  });
  afterAll(async () => {
    await emu.close();
  });

  it("a base URL without /api/public/v1 is refused before any request, with the URL to use", async () => {
    const p = track(tempProject({ baseUrl: emu.origin }));
    const r = await cli(["--config", p.config, "export", "segments", "--inline", "--no-shared-budget"], {
      RECRUIT_SYNC_API_TOKEN: emu.token,
    });
    expect(r.code).toBe(2);
    expect(oneLine(r)).toBe(
      `recruit-sync: the service's base URL ${emu.origin} lacks /api/public/v1: set RECRUIT_SYNC_BASE_URL (or service.baseUrl, or --base-url) to ${emu.origin}/api/public/v1`,
    );
    const counts = await emu.requests();
    expect(counts.byRoute.searchSegments).toBeUndefined();
  });

  it("a 404 from a path the service always has says the base URL does not lead to the service", async () => {
    const wrong = `${emu.origin}/elsewhere/api/public/v1`;
    const p = track(tempProject({ baseUrl: wrong }));
    const r = await cli(
      ["--config", p.config, "export", "segments", "email_messages", "--inline", "--no-shared-budget"],
      { RECRUIT_SYNC_API_TOKEN: emu.token },
    );
    expect(r.code).toBe(1);
    const line = oneLine(r);
    expect(line).toMatch(
      /stopped: the service at .*\/elsewhere\/api\/public\/v1 answered 404 to searchSegments/,
    );
    expect(line).toContain("RECRUIT_SYNC_BASE_URL does not lead to the service's /api/public/v1");
    expect(line).not.toContain("Resource not found");
  });
});

describe("a dry run's summary", () => {
  it("says what it would import, not that it imported", async () => {
    const p = track(tempProject());
    const r = await cli([
      "--config",
      p.config,
      "import",
      sample("mailchimp-audience.csv"),
      "--preset",
      "mailchimp",
      "--study",
      "study_5",
      "--phone-country",
      "US",
      "--inline",
      "--dry-run",
    ]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^mailchimp-import \(dry run: nothing sent\): 6 rows read → would import 4, /m);
    expect(r.stdout).toMatch(/requests it would send/);
    expect(r.stdout).not.toMatch(/\d imported/);
  });
});
