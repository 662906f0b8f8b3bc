import { execFile } from "node:child_process";
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import { REDIS_URL } from "../helpers/env.ts";
import { type TestRedis, withTestRedis } from "../helpers/redis.ts";

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, "../..");
const TRACER = path.join(ROOT, "test/helpers/loaded-modules.mjs");
/** What only some commands need; the CLI must start, and import inline, without them. */
const HEAVY = ["@duckdb/node-api", "pg", "fastify", "bullmq", "@bull-board/api"];

interface Traced {
  code: number;
  stdout: string;
  stderr: string;
  /** Every module file the process loaded, ES and CommonJS. */
  files: string[];
}

/** Runs `node [--import tracer] SCRIPT ARGS` and lists the modules it loaded. */
async function traced(
  script: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<Traced> {
  const dir = mkdtempSync(path.join(tmpdir(), "start-up-test-"));
  const out = path.join(dir, "loaded.txt");
  const env = { ...process.env, NODE_ENV: "", LOADED_MODULES_FILE: out, ...options.env };
  let result: Omit<Traced, "files">;
  try {
    const { stdout, stderr } = await run(process.execPath, ["--import", TRACER, ...script], {
      cwd: options.cwd ?? ROOT,
      env,
    });
    result = { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    result = { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
  const files = readFileSync(out, "utf8").split("\n").filter(Boolean);
  rmSync(dir, { recursive: true, force: true });
  return { ...result, files };
}

/** The packages among `names` that `files` hold a module of. */
function packagesIn(files: string[], names: readonly string[]): string[] {
  return names.filter((name) => files.some((f) => f.includes(`/node_modules/${name}/`)));
}

describe("what the CLI loads", () => {
  it("the tracer sees each heavy package when a process imports it", async () => {
    const script = HEAVY.map((name) => `await import(${JSON.stringify(name)});`).join(" ");
    const r = await traced(["--input-type=module", "-e", script]);
    expect(r.code).toBe(0);
    expect(packagesIn(r.files, HEAVY)).toEqual(HEAVY);
  });

  it.each([
    [[]],
    [["demo"]],
    [["emulator"]],
    [["worker"]],
    [["ops"]],
    [["import"]],
    [["export"]],
    [["jobs"]],
    [["jobs", "list"]],
  ])("recruit-sync %j --help loads none of DuckDB, pg, fastify, BullMQ", async (command) => {
    const r = await traced([path.join(ROOT, "bin/recruit-sync.mjs"), ...command, "--help"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Usage: recruit-sync/);
    expect(packagesIn(r.files, ["commander"])).toEqual(["commander"]);
    expect(packagesIn(r.files, HEAVY)).toEqual([]);
  });

  describe("recruit-sync import --inline", () => {
    let emu: TestEmulator;
    let redis: TestRedis;
    let dir: string;

    beforeAll(async () => {
      emu = await startTestEmulator();
      redis = await withTestRedis();
      dir = mkdtempSync(path.join(tmpdir(), "start-up-import-"));
      mkdirSync(path.join(dir, "config"));
      writeFileSync(
        path.join(dir, "config/default.yaml"),
        `service: { baseUrl: ${emu.baseUrl} }\nredis: { url: ${REDIS_URL}, prefix: ${redis.prefix} }\nwarehouse: { url: "duckdb:./data/warehouse.duckdb" }\npaths: { jobsDir: ${path.join(ROOT, "jobs")}, dataDir: ./data }\n`,
      );
    });
    afterAll(async () => {
      await emu.close();
      await redis.cleanup();
      rmSync(dir, { recursive: true, force: true });
    });

    it("imports through Redis's ledger and shared budget without DuckDB, pg, fastify or BullMQ", async () => {
      const r = await traced(
        [
          path.join(ROOT, "bin/recruit-sync.mjs"),
          "import",
          path.join(ROOT, "samples/hubspot-contacts.csv"),
          "--job",
          "hubspot-contacts",
          "--inline",
        ],
        { cwd: dir, env: { RECRUIT_SYNC_API_TOKEN: emu.token } },
      );
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/^hubspot-contacts: 13 rows read → 6 imported/m);
      // It did talk to Redis (ledger, run lock, rate budget) and parse the CSV: the tracer saw what ran.
      expect(packagesIn(r.files, ["ioredis", "csv-parse"])).toEqual(["ioredis", "csv-parse"]);
      expect(packagesIn(r.files, HEAVY)).toEqual([]);
    });
  });
});

describe("the compiled CLI in dist/", () => {
  // A copy of the parts the build and the bin read, so that building and
  // editing here leave the repository's own dist/ and src/ alone.
  let copy: string;
  const bin = () => path.join(copy, "bin/recruit-sync.mjs");
  const entryOf = (r: Traced) =>
    r.files.find((f) => f.endsWith("/dist/cli/main.js") || f.endsWith("/src/cli/main.ts"));

  beforeAll(async () => {
    copy = mkdtempSync(path.join(tmpdir(), "start-up-build-"));
    for (const part of ["bin", "scripts", "src", "package.json", "tsconfig.json"]) {
      cpSync(path.join(ROOT, part), path.join(copy, part), { recursive: true });
    }
    symlinkSync(path.join(ROOT, "node_modules"), path.join(copy, "node_modules"));
    const built = await run(process.execPath, [path.join(copy, "scripts/build-dist.mjs")], { cwd: copy });
    expect(built.stdout).toMatch(/^build-dist: \d+ modules from src\/ compiled to dist\/ in \d+ ms$/m);
  }, 60_000);
  afterAll(() => rmSync(copy, { recursive: true, force: true }));

  it("runs dist/ while it matches src/, and answers as the sources do", async () => {
    const compiled = await traced([bin(), "import", "--help"], { cwd: copy });
    expect(entryOf(compiled)).toBe(path.join(copy, "dist/cli/main.js"));
    expect(compiled.files.some((f) => f.includes("/node_modules/tsx/"))).toBe(false);
    const source = await traced([bin(), "import", "--help"], {
      cwd: copy,
      env: { RECRUIT_SYNC_FROM_SOURCE: "1" },
    });
    expect(entryOf(source)).toBe(path.join(copy, "src/cli/main.ts"));
    expect(compiled.stdout).toBe(source.stdout);
  });

  it("runs src/ through tsx once a source file is edited, added or removed", async () => {
    const file = path.join(copy, "src/cli/exit-codes.ts");
    const later = new Date(Date.now() + 5_000);
    utimesSync(file, later, later);
    expect(entryOf(await traced([bin(), "--help"], { cwd: copy }))).toBe(path.join(copy, "src/cli/main.ts"));

    await run(process.execPath, [path.join(copy, "scripts/build-dist.mjs")], { cwd: copy });
    expect(entryOf(await traced([bin(), "--help"], { cwd: copy }))).toBe(path.join(copy, "dist/cli/main.js"));

    writeFileSync(path.join(copy, "src/cli/added.ts"), "export const added = 1;\n");
    expect(entryOf(await traced([bin(), "--help"], { cwd: copy }))).toBe(path.join(copy, "src/cli/main.ts"));
    rmSync(path.join(copy, "src/cli/added.ts"));

    await run(process.execPath, [path.join(copy, "scripts/build-dist.mjs")], { cwd: copy });
    rmSync(path.join(copy, "src/cli/queue-session.ts"));
    expect(entryOf(await traced([bin(), "--help"], { cwd: copy }))).toBe(path.join(copy, "src/cli/main.ts"));
  }, 60_000);

  it("the build does nothing, successfully, where there is no src/ (the Dockerfile's dependencies stage)", async () => {
    const bare = mkdtempSync(path.join(tmpdir(), "start-up-bare-"));
    cpSync(path.join(ROOT, "scripts"), path.join(bare, "scripts"), { recursive: true });
    symlinkSync(path.join(ROOT, "node_modules"), path.join(bare, "node_modules"));
    const r = await run(process.execPath, [path.join(bare, "scripts/build-dist.mjs")], { cwd: bare });
    expect(r.stdout).toBe("build-dist: no src/ here, nothing to compile\n");
    rmSync(bare, { recursive: true, force: true });
  });
});
