import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliResult, runCli } from "../helpers/cli.ts";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import { REDIS_URL } from "../helpers/env.ts";
import { type TestRedis, withTestRedis } from "../helpers/redis.ts";

/*
 * Every failure a person meets first prints one line on stderr, saying how to
 * mend it: no stack, no pino JSON, no ioredis noise. The real bin runs as a
 * child process with the default log level (logs would show if any were written).
 */

const repoJobs = path.resolve("jobs");
const sample = (name: string) => path.resolve("samples", name);

/** A loopback port nothing listens on: bound, then closed. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const dirs: string[] = [];
const redisPrefixes: TestRedis[] = [];
afterAll(async () => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  // The keys the runs made under each project's prefix (the shared budget's, the ledger's).
  for (const r of redisPrefixes) await r.cleanup();
});

/** A project of its own: config/default.yaml in a temp folder, data beside it, a Redis prefix of its own. */
async function tempProject(baseUrl: string): Promise<{ dir: string; config: string }> {
  const owned = await withTestRedis();
  redisPrefixes.push(owned);
  const dir = mkdtempSync(path.join(tmpdir(), "recruit-sync-one-line-"));
  dirs.push(dir);
  mkdirSync(path.join(dir, "config"));
  writeFileSync(
    path.join(dir, "config", "default.yaml"),
    [
      `service: { baseUrl: "${baseUrl}" }`,
      `redis: { url: "${REDIS_URL}", prefix: "${owned.prefix}" }`,
      `warehouse: { url: "duckdb:${path.join(dir, "data", "warehouse.duckdb")}" }`,
      `paths: { jobsDir: "${repoJobs}", dataDir: "${path.join(dir, "data")}" }`,
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
      RECRUIT_SYNC_API_TOKEN: "",
      LOG_LEVEL: "",
      DEBUG: "",
      ...env,
    },
    timeoutMs: 60_000,
  });
}

/** The one line on stderr; fails on a second line, a stack frame, pino JSON or ioredis noise. */
function oneLine(r: CliResult): string {
  expect(r.stderr).not.toMatch(/^\s+at /m);
  expect(r.stderr).not.toContain('{"level"');
  expect(r.stderr).not.toContain("[ioredis]");
  const lines = r.stderr.trimEnd().split("\n");
  expect(lines, r.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^recruit-sync: /);
  return lines[0] as string;
}

let unreachable: string;
let project: { dir: string; config: string };
beforeAll(async () => {
  unreachable = `http://127.0.0.1:${await closedPort()}/api/public/v1`;
  project = await tempProject(unreachable);
});

describe("bad usage: exit 2, one line naming the command's --help", () => {
  it("an unknown option", async () => {
    const r = await cli(["import", "x.csv", "--bogus"]);
    expect(r.code).toBe(2);
    expect(oneLine(r)).toBe(
      "recruit-sync: unknown option '--bogus' (run 'recruit-sync import --help' for usage)",
    );
  });

  it("a missing argument and an unknown command", async () => {
    const missing = await cli(["import"]);
    expect(missing.code).toBe(2);
    expect(oneLine(missing)).toBe(
      "recruit-sync: missing required argument 'file' (run 'recruit-sync import --help' for usage)",
    );
    const unknown = await cli(["imprt"]);
    expect(unknown.code).toBe(2);
    expect(oneLine(unknown)).toMatch(
      /^recruit-sync: unknown command 'imprt'.* \(run 'recruit-sync --help' for usage\)$/,
    );
  });
});

describe("a missing file: exit 2, one line", () => {
  it("inline and queued", async () => {
    const missing = path.join(project.dir, "nope.csv");
    for (const mode of [["--inline"], []]) {
      const r = await cli(["--config", project.config, "import", missing, "--job", "opt-out-list", ...mode]);
      expect(r.code).toBe(2);
      expect(oneLine(r)).toBe(`recruit-sync: no such file: ${missing}`);
    }
  });

  it("--verbose adds the stack, and so does DEBUG", async () => {
    const missing = path.join(project.dir, "nope.csv");
    const args = ["--config", project.config, "import", missing, "--job", "opt-out-list", "--inline"];
    for (const r of [await cli(["--verbose", ...args]), await cli(args, { DEBUG: "1" })]) {
      expect(r.code).toBe(2);
      const lines = r.stderr.trimEnd().split("\n");
      expect(lines[0]).toBe(`recruit-sync: no such file: ${missing}`);
      expect(r.stderr).toMatch(/^\s+at .*import\.[jt]s/m);
    }
  });
});

describe("an invalid job definition: exit 2, one line", () => {
  it("for an import and an export", async () => {
    const bad = path.join(project.dir, "teleport.yaml");
    writeFileSync(bad, "kind: teleport\n");
    const imp = await cli([
      "--config",
      project.config,
      "import",
      sample("opt-out-list.csv"),
      "--job",
      bad,
      "--inline",
    ]);
    expect(imp.code).toBe(2);
    expect(oneLine(imp)).toContain("teleport.yaml");
    const exp = await cli(["--config", project.config, "export", "--job", bad, "--inline"]);
    expect(exp.code).toBe(2);
    expect(oneLine(exp)).toContain("teleport.yaml");
  });
});

describe("Redis unreachable: exit 2, one line saying how to get one", () => {
  let redisDown: string;
  beforeAll(async () => {
    redisDown = `redis://127.0.0.1:${await closedPort()}`;
  });
  const says = (line: string) =>
    expect(line).toMatch(
      new RegExp(
        `^recruit-sync: Redis does not answer at ${redisDown} \\(.+\\): start redis-server or set REDIS_URL$`,
      ),
    );

  it.each([
    ["import --wait", () => ["import", sample("opt-out-list.csv"), "--job", "opt-out-list", "--wait"]],
    ["export --wait", () => ["export", "segments", "--wait"]],
    ["import (queued)", () => ["import", sample("opt-out-list.csv"), "--job", "opt-out-list"]],
    ["export --inline (shared budget)", () => ["export", "segments", "--inline"]],
    [
      "import --inline (ledger)",
      () => ["import", sample("hubspot-contacts.csv"), "--job", "hubspot-contacts", "--inline"],
    ],
  ])("%s", async (_name, args) => {
    const r = await cli(["--config", project.config, ...args()], {
      REDIS_URL: redisDown,
      RECRUIT_SYNC_API_TOKEN: "any",
    });
    expect(r.code).toBe(2);
    says(oneLine(r));
  });
});

describe("the service unreachable: exit 1, one line naming what to check", () => {
  it("an export", async () => {
    const r = await cli(
      ["--config", project.config, "export", "segments", "--inline", "--no-shared-budget"],
      {
        RECRUIT_SYNC_API_TOKEN: "any",
      },
    );
    expect(r.code).toBe(1);
    expect(oneLine(r)).toMatch(
      new RegExp(
        `stopped: the service at ${unreachable} cannot be reached .*: check RECRUIT_SYNC_BASE_URL and that the service is up$`,
      ),
    );
  });

  it("an import", async () => {
    const r = await cli(
      [
        "--config",
        project.config,
        "import",
        sample("hubspot-contacts.csv"),
        "--job",
        "hubspot-contacts",
        "--inline",
      ],
      { RECRUIT_SYNC_API_TOKEN: "any" },
    );
    expect(r.code).toBe(1);
    expect(oneLine(r)).toMatch(
      /could not reach the service .*: check RECRUIT_SYNC_BASE_URL \(or --base-url\) and that the service is up$/,
    );
  });
});

describe("a wrong token: exit 1, one line naming RECRUIT_SYNC_API_TOKEN", () => {
  let emu: TestEmulator;
  let p: { dir: string; config: string };
  beforeAll(async () => {
    emu = await startTestEmulator({ sizes: { people: 20 } });
    p = await tempProject(emu.baseUrl);
  });
  afterAll(async () => {
    await emu.close();
  });

  it("an export, its budget shared through Redis", async () => {
    const r = await cli(["--config", p.config, "export", "segments", "--inline"], {
      RECRUIT_SYNC_API_TOKEN: "not-the-token",
    });
    expect(r.code).toBe(1);
    expect(oneLine(r)).toMatch(
      /stopped: the service refused the API token \(401 at searchSegments\): check RECRUIT_SYNC_API_TOKEN$/,
    );
    // The report still goes to stdout, the token nowhere.
    expect(r.stdout).toMatch(/segments .* failed/);
    expect(r.stdout + r.stderr).not.toContain("not-the-token");
  });

  it("an import", async () => {
    const r = await cli(
      [
        "--config",
        p.config,
        "import",
        sample("hubspot-contacts.csv"),
        "--job",
        "hubspot-contacts",
        "--inline",
      ],
      { RECRUIT_SYNC_API_TOKEN: "not-the-token" },
    );
    expect(r.code).toBe(1);
    expect(oneLine(r)).toMatch(/the API token is missing or invalid \(401\): check RECRUIT_SYNC_API_TOKEN/);
    expect(r.stdout + r.stderr).not.toContain("not-the-token");
  });
});
