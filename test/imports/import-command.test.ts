import { mkdir, readFile, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.ts";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import { REDIS_URL } from "../helpers/env.ts";
import { type TestRedis, withTestRedis } from "../helpers/redis.ts";
import { type Scratch, scratch } from "./fixtures.ts";
import { ROOT, sample } from "./helpers.ts";

let emu: TestEmulator;
let redis: TestRedis;
let s: Scratch;

/** Runs the command in a scratch directory whose config/default.yaml points at this test's Redis prefix. */
function cli(args: string[], env: Record<string, string> = {}) {
  return runCli(args, {
    cwd: s.dir,
    env: {
      NODE_ENV: "",
      RECRUIT_SYNC_BASE_URL: emu.baseUrl,
      RECRUIT_SYNC_API_TOKEN: emu.token,
      REDIS_URL,
      ...env,
    },
  });
}

beforeEach(async () => {
  emu = await startTestEmulator();
  redis = await withTestRedis();
  s = await scratch();
  await mkdir(path.join(s.dir, "config"));
  await writeFile(
    path.join(s.dir, "config/default.yaml"),
    `service: { baseUrl: ${emu.baseUrl} }\nredis: { url: ${REDIS_URL}, prefix: ${redis.prefix} }\nwarehouse: { url: "file:./data" }\npaths: { jobsDir: ${path.join(ROOT, "jobs")}, dataDir: ./data }\n`,
  );
});
afterEach(async () => {
  await emu.close();
  await redis.cleanup();
  await s.cleanup();
});

describe("recruit-sync import", () => {
  it("says in one line that the queue needs Redis when it does not answer, and exits 2", async () => {
    const r = await cli(["import", sample("hubspot-contacts.csv"), "--job", "hubspot-contacts"], {
      REDIS_URL: "redis://127.0.0.1:9",
    });
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split("\n")).toEqual([
      "recruit-sync: Redis does not answer at redis://127.0.0.1:9 (the queues live there; or run with --inline): start redis-server or set REDIS_URL",
    ]);
  });

  it("imports a sample with its job, writes the report, then skips the same file", async () => {
    const reportFile = path.join(s.dir, "report.json");
    const r = await cli([
      "import",
      sample("hubspot-contacts.csv"),
      "--job",
      "hubspot-contacts",
      "--inline",
      "--report",
      reportFile,
      "--no-shared-budget",
    ]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /^hubspot-contacts: 13 rows read → 11 imported, 1 rejected, 1 merged duplicates$/m,
    );
    const report = JSON.parse(await readFile(reportFile, "utf8")) as Record<string, unknown>;
    expect(report).toMatchObject({ rowsRead: 13, imported: 11, rejected: 1, duplicates: 1, batches: 3 });
    for (const key of ["importIds", "rejectsFile", "unmappedColumns", "rejectedByReason"])
      expect(report).toHaveProperty(key);
    expect(((await stat(report.rejectsFile as string)).mode & 0o777).toString(8)).toBe("600");

    const again = await cli([
      "import",
      sample("hubspot-contacts.csv"),
      "--job",
      "hubspot-contacts",
      "--inline",
      "--no-shared-budget",
    ]);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/was already imported on .* with this definition; skipped \(use --force/);
    expect((await emu.requests()).byRoute.importParticipants).toEqual({ "200": 3 });
  });

  it("makes no calls in a dry run with a preset", async () => {
    const requests = path.join(s.dir, "requests.jsonl");
    const r = await cli([
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
      "--requests",
      requests,
    ]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /^mailchimp-import \(dry run: nothing sent\): 6 rows read → would import 4, 1 rejected, 1 merged duplicates$/m,
    );
    const lines = (await readFile(requests, "utf8")).trim().split("\n");
    expect(JSON.parse(lines[0] as string)).toMatchObject({
      method: "POST",
      path: "/studies/study_5/participants/import",
    });
    expect((await emu.requests()).total).toBe(0);
  });

  it("exits 2 for bad usage and 1 for a failed run, with one line each", async () => {
    const cases: [string[], number, RegExp][] = [
      [
        ["import", sample("hubspot-contacts.csv"), "--inline"],
        2,
        /say how to read the file: --job NAME, or --preset/,
      ],
      [
        ["import", sample("hubspot-contacts.csv"), "--preset", "zoho", "--study", "s", "--inline"],
        2,
        /unknown preset zoho/,
      ],
      [
        ["import", sample("hubspot-contacts.csv"), "--preset", "hubspot", "--inline"],
        2,
        /--preset hubspot needs --study ID/,
      ],
      [["import", sample("nope.csv"), "--job", "hubspot-contacts", "--inline"], 2, /no such file/],
      [
        ["import", sample("hubspot-contacts.csv"), "--job", "nightly-export", "--inline"],
        2,
        /kind: must be "import" or "opt-out"/,
      ],
    ];
    for (const [args, code, line] of cases) {
      const r = await cli(args);
      expect(r.code, args.join(" ")).toBe(code);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
      expect(r.stderr).toMatch(line);
    }
    const denied = await cli(
      [
        "import",
        sample("salesforce-contact-report.csv"),
        "--job",
        "salesforce-contacts",
        "--inline",
        "--no-shared-budget",
      ],
      {
        RECRUIT_SYNC_API_TOKEN: "wrong-token",
      },
    );
    expect(denied.code).toBe(1);
    expect(denied.stderr.trim()).toBe(
      "recruit-sync: importParticipants: the API token is missing or invalid (401): check RECRUIT_SYNC_API_TOKEN (the emulator prints its token when it starts)",
    );
  });
});
