import { execFile } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
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
import { BUNDLED_PACKAGES } from "../../scripts/cli-bundle.mjs";
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

/** The CLI's entry module the process ran: the compiled bundle's, or the source's through tsx. */
function entryOf(r: Traced): string | undefined {
  return r.files.find((f) => f.endsWith("/dist/cli/main.js") || f.endsWith("/src/cli/main.ts"));
}

describe("what the CLI loads", () => {
  it("the compiled CLI keeps the heavy packages out of its bundle, where the tracer sees them", () => {
    expect(HEAVY.filter((name) => BUNDLED_PACKAGES.includes(name))).toEqual([]);
  });

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
    // The tracer saw the CLI run (commander and the rest may be compiled into it).
    expect(entryOf(r)).toBeDefined();
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
      expect(r.stdout).toMatch(/^hubspot-contacts: 13 rows read → 11 imported/m);
      // It did keep its ledger and the shared budget in Redis, and the tracer saw the CLI run.
      const keys = await redis.redis.keys(`${redis.prefix}:*`);
      expect(keys.some((k) => k.startsWith(`${redis.prefix}:import-ledger:`))).toBe(true);
      expect(keys.some((k) => k.startsWith(`${redis.prefix}:governor:`))).toBe(true);
      expect(entryOf(r)).toBeDefined();
      expect(packagesIn(r.files, HEAVY)).toEqual([]);
    });
  });
});

describe("the compile cache", () => {
  it("lives in the user's own ~/.cache where Node has one, never in the shared temporary folder", async () => {
    const home = mkdtempSync(path.join(tmpdir(), "start-up-home-"));
    try {
      const env: NodeJS.ProcessEnv = { ...process.env, HOME: home };
      delete env.NODE_COMPILE_CACHE;
      delete env.NODE_DISABLE_COMPILE_CACHE;
      const { stdout } = await run(process.execPath, [path.join(ROOT, "bin/recruit-sync.mjs"), "--version"], {
        cwd: home,
        env,
      });
      expect(stdout.trim()).toBe("0.1.0");
      const cache = path.join(home, ".cache", "recruit-sync", "compile-cache");
      // Node 20 has no compile cache; from 22.1 on the bin keeps one per Node version.
      const hasCache = "enableCompileCache" in (await import("node:module")).default;
      expect(existsSync(cache)).toBe(hasCache);
      if (hasCache) expect(readdirSync(cache).some((d) => d.startsWith(`${process.version}-`))).toBe(true);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});

describe("the compiled CLI in dist/", () => {
  // A copy of the parts the build and the bin read, so that building and
  // editing here leave the repository's own dist/ and src/ alone.
  let copy: string;
  const bin = () => path.join(copy, "bin/recruit-sync.mjs");

  beforeAll(async () => {
    copy = mkdtempSync(path.join(tmpdir(), "start-up-build-"));
    for (const part of ["bin", "scripts", "src", "config", "package.json", "tsconfig.json"]) {
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

  it("is a bundle whose modules still find the files beside their own compiled paths", async () => {
    const stamp = JSON.parse(readFileSync(path.join(copy, "dist/.sources.json"), "utf8")) as {
      files: Record<string, unknown>;
    };
    // A package compiled into the bundle and updated since makes dist/ stale, as an edited source does.
    expect(Object.keys(stamp.files).some((f) => f.endsWith("node_modules/zod/package.json"))).toBe(true);

    const redis = await withTestRedis();
    const project = mkdtempSync(path.join(tmpdir(), "start-up-bundle-"));
    try {
      mkdirSync(path.join(project, "config"));
      writeFileSync(
        path.join(project, "config/default.yaml"),
        `redis: { url: ${REDIS_URL}, prefix: ${redis.prefix} }\npaths: { dataDir: ./data }\n`,
      );
      // Over 4 MB, so that read-records.ts parses it on its worker thread (dist/imports/parse-worker.js).
      const rows = 20_000;
      const note = "x".repeat(200);
      const lines = Array.from({ length: rows }, (_, i) => `person${i}@example.org,Ann,${note}`);
      const file = path.join(project, "large.csv");
      writeFileSync(file, `Email,First Name,Notes\n${lines.join("\n")}\n`);
      const r = await traced(
        [bin(), "import", file, "--preset", "hubspot", "--study", "study_1", "--dry-run", "--inline"],
        // The shipped config/default.yaml is found from the bundle too: it holds every setting's default.
        { cwd: project },
      );
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      expect(entryOf(r)).toBe(path.join(copy, "dist/cli/main.js"));
      expect(r.stdout).toMatch(
        /^hubspot-import \(dry run: nothing sent\): 20,000 rows read → would import 20,000, 0 rejected/m,
      );
    } finally {
      await redis.cleanup();
      rmSync(project, { recursive: true, force: true });
    }
  }, 60_000);

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
