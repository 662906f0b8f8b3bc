import { readdir, readFile, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import { Redis } from "ioredis";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ForgetReceipt } from "../../src/forget/index.ts";
import { deleteKeysByPrefix } from "../../src/runtime/delete-keys.ts";
import { runCli } from "../helpers/cli.ts";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import { REDIS_URL } from "../helpers/env.ts";
import { type TestSchema, withTestSchema } from "../helpers/postgres.ts";
import { createProject, type Project } from "../queue/helpers.ts";

const EMAIL = "Forget.Me@erasure.example";
const PHONE = "+14155550142";
const KEEP = "stay.here@erasure.example";
const JOBS = {
  people: {
    kind: "import",
    target: { studyId: "study_1" },
    columns: [
      { column: "Email", to: "email" },
      { column: "Phone", to: "phone" },
      { column: "First Name", to: "firstName" },
    ],
  },
};

/** Every file under a folder, with its bytes. */
async function filesUnder(dir: string): Promise<{ file: string; bytes: Buffer }[]> {
  const out: { file: string; bytes: Buffer }[] = [];
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!e.isFile()) continue;
    const file = path.join(e.parentPath, e.name);
    out.push({ file, bytes: await readFile(file) });
  }
  return out;
}

const mentions = (text: string) => {
  const t = text.toLowerCase();
  return t.includes(EMAIL.toLowerCase()) || t.includes(PHONE) || t.includes(PHONE.slice(2));
};

/** Every key under the prefix with its value, whatever its type, as one text. */
async function redisText(redis: Redis, prefix: string): Promise<string> {
  const parts: string[] = [];
  let cursor = "0";
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
    cursor = next;
    for (const key of keys) {
      parts.push(key);
      const type = await redis.type(key);
      if (type === "string") parts.push((await redis.getBuffer(key))?.toString("latin1") ?? "");
      else if (type === "hash") parts.push(...Object.entries(await redis.hgetall(key)).flat());
      else if (type === "list") parts.push(...(await redis.lrange(key, 0, -1)));
      else if (type === "set") parts.push(...(await redis.smembers(key)));
      else if (type === "zset") parts.push(...(await redis.zrange(key, "0", "-1")));
      else if (type === "stream") parts.push(JSON.stringify(await redis.xrange(key, "-", "+")));
    }
  } while (cursor !== "0");
  return parts.join("\n");
}

async function duckDbText(file: string): Promise<{ text: string; tables: string[] }> {
  const instance = await DuckDBInstance.create(file);
  const conn = await instance.connect();
  try {
    const tables = (
      await conn.runAndReadAll("SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'")
    )
      .getRowsJS()
      .map((r) => String(r[0]));
    const parts: string[] = [];
    for (const t of tables) {
      const rows = (await conn.runAndReadAll(`SELECT * FROM "${t}"`)).getRowObjectsJS();
      parts.push(JSON.stringify(rows, (_k, v) => (typeof v === "bigint" ? String(v) : v)));
    }
    return { text: parts.join("\n"), tables };
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
}

async function postgresText(pg: TestSchema): Promise<{ text: string; tables: string[] }> {
  const { rows } = await pg.pool.query<{ table_name: string }>(
    "SELECT table_name FROM information_schema.tables WHERE table_schema = $1",
    [pg.schema],
  );
  const parts: string[] = [];
  for (const { table_name } of rows) {
    const res = await pg.pool.query(`SELECT t::text AS row FROM "${table_name}" t`);
    parts.push(...res.rows.map((r: { row: string }) => r.row));
  }
  return { text: parts.join("\n"), tables: rows.map((r) => r.table_name) };
}

describe("recruit-sync forget", () => {
  let emu: TestEmulator;
  let project: Project;
  let redis: Redis;
  let pg: TestSchema;
  const cli = async (...args: string[]) => {
    const r = await runCli(["--config", project.configDir, ...args], { env: project.env, cwd: project.dir });
    expect(r.code, `${args.join(" ")}\n${r.stdout}\n${r.stderr}`).toBe(0);
    return r;
  };

  beforeEach(async () => {
    emu = await startTestEmulator();
    project = await createProject({ redisUrl: REDIS_URL, emulator: emu, jobs: JOBS });
    redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
    pg = await withTestSchema();
  });
  afterEach(async () => {
    await emu.close();
    await deleteKeysByPrefix(redis, project.prefix);
    redis.disconnect();
    await pg.cleanup();
    await project.cleanup();
  });

  it("leaves no trace of the person's email or phone in the warehouses, Redis or the data folder, and lists each place in its receipt", async () => {
    const dataDir = path.join(project.dir, "data");
    // The person, someone else, and a row of the person's phone that is rejected (bad email).
    // (The warnings file of values left out names rows and fields, never a value.)
    const file = await project.file(
      "people.csv",
      [
        "Email,Phone,First Name",
        `${EMAIL},${PHONE},Ada`,
        `${KEEP},+14155550199,Bea`,
        `not-an-email,${PHONE},Ada again`,
      ].join("\n"),
    );
    await cli("import", file, "--job", "people", "--inline");
    await cli("export", "participants", "--study", "study_1", "--inline");
    await cli("export", "participants", "--study", "study_1", "--inline", "--warehouse", pg.url);
    // A console upload of the person's row, as the ops console keeps them.
    await writeFile(path.join(dataDir, "uploads-people.csv"), `Email,Phone\n${EMAIL},${PHONE}\n${KEEP},\n`, {
      mode: 0o600,
    });

    // Before: every place holds them, so the search below can fail.
    const before = (await filesUnder(dataDir)).filter((f) => mentions(f.bytes.toString("latin1")));
    expect(before.length).toBeGreaterThanOrEqual(3);
    expect(mentions((await duckDbText(project.warehouseFile)).text)).toBe(true);
    expect(mentions((await postgresText(pg)).text)).toBe(true);

    const run = await cli("forget", EMAIL.toUpperCase(), "+1 (415) 555-0142", "--warehouse", pg.url);
    expect(mentions(`${run.stdout}${run.stderr}`)).toBe(false);

    // The data folder, byte for byte (the receipt included).
    const after = await filesUnder(dataDir);
    for (const f of after) expect(mentions(f.bytes.toString("latin1")), f.file).toBe(false);
    // Redis, every key and value under the prefix.
    expect(mentions(await redisText(redis, project.prefix))).toBe(false);
    // Every table of both warehouses.
    const duck = await duckDbText(project.warehouseFile);
    expect(duck.tables).toContain("participants");
    expect(mentions(duck.text)).toBe(false);
    const pgText = await postgresText(pg);
    expect(pgText.tables).toContain("participants");
    expect(mentions(pgText.text)).toBe(false);
    // Nobody else went with them.
    expect(duck.text).toContain(KEEP);
    expect(pgText.text).toContain(KEEP);
    expect(await readFile(path.join(dataDir, "uploads-people.csv"), "utf8")).toBe(`Email,Phone\n${KEEP},\n`);

    // The receipt: each place, no person.
    const receiptFile = /receipt: (.+)$/m.exec(run.stdout)?.[1] as string;
    expect((await stat(receiptFile)).mode & 0o777).toBe(0o600);
    const receipt = JSON.parse(await readFile(receiptFile, "utf8")) as ForgetReceipt;
    expect(mentions(JSON.stringify(receipt))).toBe(false);
    expect(receipt.subjects).toHaveLength(2);
    const removed = (kind: string, table: string) =>
      receipt.warehouses.find((w) => w.kind === kind)?.tables.find((t) => t.table === table)?.removed;
    expect(removed("duckdb", "participants")).toBe(1);
    expect(removed("postgres", "participants")).toBe(1);
    expect(receipt.redis).toMatchObject({ prefix: project.prefix });
    expect((receipt.redis as { changeOnlyFields: number }).changeOnlyFields).toBeGreaterThanOrEqual(1);
    const files = receipt.dataFolder.files.map((f) => f.file);
    for (const f of before) {
      const rel = path.relative(dataDir, f.file);
      if (f.file.startsWith(project.warehouseFile)) continue;
      expect(files, rel).toContain(rel);
    }
    expect(files.some((f) => f.includes("rejects"))).toBe(true);
    expect(files).toContain("uploads-people.csv");

    // The rewritten DuckDB file is a warehouse like before: the next export writes to it.
    await cli("export", "participants", "--study", "study_1", "--inline");
    expect((await duckDbText(project.warehouseFile)).text).toContain(KEEP);
  }, 120_000);
});
