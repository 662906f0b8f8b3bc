/**
 * Loads the same participant records (1,000,000 by default) through our sinks
 * and through the bare bulk path of the same database: DuckDB's Appender into
 * an unkeyed table, PostgreSQL's COPY into an unkeyed table. Goal: our sink at
 * ≥ 50% of the bare rows/s for each.
 *
 * Only the writes are timed: each batch of records is made and turned into
 * rows (the exporter's work, not the sink's) before its clock starts, and the
 * bare paths get their values ready the same way. Each side runs in a child
 * process of its own, so its peak RSS (getrusage maxrss) is its own; the sides
 * alternate, best of --repeat quoted.
 *
 *   npx tsx bench/sink-bench.ts [--rows 1000000] [--only duckdb|postgres] [--batch 5000] [--repeat 2]
 *
 * PostgreSQL: DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test);
 * the bench makes its own schema and drops it.
 */
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { DuckDBInstance, LIST, listValue, VARCHAR } from "@duckdb/node-api";
import pg from "pg";
import { from as copyFrom } from "pg-copy-streams";
import { z } from "zod";
import type { Participant } from "../src/api/index.ts";
import { DEFAULT_CHECKPOINT_ROWS, EXPORT_TABLES } from "../src/exports/index.ts";
import {
  allColumns,
  createSink,
  DUCKDB_TYPES,
  POSTGRES_TYPES,
  type Row,
  type Sink,
} from "../src/sinks/index.ts";

const { values: args } = parseArgs({
  options: {
    rows: { type: "string", default: "1000000" },
    only: { type: "string" },
    batch: { type: "string", default: String(DEFAULT_CHECKPOINT_ROWS) },
    /** Runs of each path, alternating; the best of each counts (shared machines are noisy). */
    repeat: { type: "string", default: "2" },
    /** Internal: run one side in this process and print its result. */
    side: { type: "string" },
  },
});
const ROWS = Number(args.rows);
const BATCH = Number(args.batch);
const REPEAT = Math.max(1, Number(args.repeat));
const DATABASE_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const table = EXPORT_TABLES.participants;
const columns = allColumns(table.table);
const RUN_ID = "bench-run";

const STATUSES = ["NOT_STARTED", "INVITED", "SCHEDULED", "COMPLETED"];
const T0 = Date.UTC(2026, 0, 1);
const iso = (ms: number) => new Date(ms).toISOString();

/** Records as the service returns them, made up on the fly so memory stays flat. */
function* participants(n: number): Generator<Participant> {
  for (let i = 1; i <= n; i++) {
    yield {
      participantId: `participant_${i}`,
      personId: `person_${i}`,
      studyId: `study_${(i % 12) + 1}`,
      email: `person.${i}@example.com`,
      additionalEmails: i % 5 === 0 ? [`alt.${i}@example.com`] : [],
      phone: `+1555${String(i).padStart(7, "0")}`,
      additionalPhones: [],
      status: STATUSES[i % STATUSES.length] as string,
      approvalStatus: "HIDDEN",
      screenerState: "SCREENER_SENT",
      invitedToStudyAt: iso(T0 + i * 1000),
      screenerSentAt: iso(T0 + i * 1000 + 3_600_000),
      addedToStudyAt: iso(T0 + i * 1000 - 3_600_000),
      note: i % 3 === 0 ? { note: "Great fit", createdByUserId: "user_1" } : null,
    };
  }
}

function* rowBatches(n: number, size: number): Generator<Row[]> {
  let batch: Row[] = [];
  for (const p of participants(n)) {
    batch.push(table.toRow(p, { study_id: p.studyId }));
    if (batch.length === size) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length) yield batch;
}

/** Only the time between `start` and `stop` counts. */
class Clock {
  ms = 0;
  #t = 0;
  start(): void {
    this.#t = performance.now();
  }
  stop(): void {
    this.ms += performance.now() - this.#t;
  }
}

async function viaSink(sink: Sink): Promise<number> {
  await sink.prepare([table.table]);
  const clock = new Clock();
  let pages = 0;
  for (const rows of rowBatches(ROWS, BATCH)) {
    pages++;
    // The rows with the stream's cursor and its sync_runs row, as one checkpoint.
    clock.start();
    await sink.commit({
      runId: RUN_ID,
      upsert: { table: table.table.name, rows },
      state: { stream: "participants:bench", value: { pass: { cursor: `c${pages}` } } },
      run: {
        runId: RUN_ID,
        resource: "participants",
        startedAt: new Date(),
        finishedAt: null,
        status: "running",
        pages,
        rows: pages * BATCH,
        requests: pages,
        error: null,
      },
    });
    clock.stop();
  }
  // Closing checkpoints DuckDB's write-ahead log into the file: part of the load.
  clock.start();
  await sink.close();
  clock.stop();
  return (ROWS / clock.ms) * 1000;
}

type Value = string | null | string[] | bigint;

/** A batch's values column by column in the bare table's order, made before the clock starts. */
function bareValues(rows: Row[], synced: string): Value[][] {
  return rows.map((row) =>
    columns.map((c) => {
      const v = c.name === "_synced_at" ? synced : c.name === "_run_id" ? RUN_ID : row[c.name];
      if (v === null || v === undefined) return null;
      if (c.type === "text_array") return v as string[];
      if (c.type === "json") return JSON.stringify(v);
      if (c.type === "bigint") return BigInt(v as number);
      return String(v);
    }),
  );
}

async function bareDuckDb(path: string): Promise<number> {
  const instance = await DuckDBInstance.create(path);
  const conn = await instance.connect();
  await conn.run(
    `CREATE TABLE bare (${columns.map((c) => `"${c.name}" ${DUCKDB_TYPES[c.type]}`).join(", ")})`,
  );
  const clock = new Clock();
  const appender = await conn.createAppender("bare");
  const list = LIST(VARCHAR);
  const synced = new Date().toISOString();
  for (const rows of rowBatches(ROWS, BATCH)) {
    const values = bareValues(rows, synced);
    clock.start();
    for (const row of values) {
      for (const v of row) {
        if (v === null) appender.appendNull();
        else if (Array.isArray(v)) appender.appendList(listValue(v), list);
        else if (typeof v === "bigint") appender.appendBigInt(v);
        else appender.appendVarchar(v);
      }
      appender.endRow();
    }
    clock.stop();
  }
  clock.start();
  appender.flushSync();
  appender.closeSync();
  await conn.run("CHECKPOINT");
  clock.stop();
  conn.closeSync();
  instance.closeSync();
  return (ROWS / clock.ms) * 1000;
}

function copyText(v: string): string {
  return v.replace(/[\\\t\n\r]/g, (c) =>
    c === "\\" ? "\\\\" : c === "\t" ? "\\t" : c === "\n" ? "\\n" : "\\r",
  );
}

async function barePostgres(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query(
    `CREATE TABLE bare (${columns.map((c) => `"${c.name}" ${POSTGRES_TYPES[c.type]}`).join(", ")})`,
  );
  const synced = new Date().toISOString();
  const clock = new Clock();
  // One COPY per batch, awaited, like our commits: a single COPY would let the
  // server work on the rows while the next batch is made, off the clock.
  for (const rows of rowBatches(ROWS, BATCH)) {
    let chunk = "";
    for (const row of bareValues(rows, synced)) {
      const fields = row.map((v) => {
        if (v === null) return "\\N";
        if (Array.isArray(v)) return copyText(`{${v.map((s) => `"${s}"`).join(",")}}`);
        return copyText(String(v));
      });
      chunk += `${fields.join("\t")}\n`;
    }
    clock.start();
    await pipeline(Readable.from([chunk]), client.query(copyFrom("COPY bare FROM STDIN")));
    clock.stop();
  }
  await client.end();
  return (ROWS / clock.ms) * 1000;
}

async function withSchema<T>(work: (url: string) => Promise<T>): Promise<T> {
  const schema = `bench_${randomUUID().replaceAll("-", "")}`;
  const admin = new pg.Client({ connectionString: DATABASE_URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA "${schema}"`);
  const url = new URL(DATABASE_URL);
  url.searchParams.set("options", `-c search_path=${schema}`);
  try {
    return await work(url.toString());
  } finally {
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.end();
  }
}

const SIDES = ["ours-duckdb", "bare-duckdb", "ours-postgres", "bare-postgres"] as const;
type SideName = (typeof SIDES)[number];
const SideResult = z.object({ rowsPerS: z.number(), maxRssMb: z.number() });
type SideResult = z.infer<typeof SideResult>;

/** Runs one side in this process (the child's part). */
async function runSide(side: SideName): Promise<number> {
  if (side.endsWith("duckdb")) {
    const dir = await mkdtemp(join(tmpdir(), "sink-bench-"));
    try {
      return side === "ours-duckdb"
        ? await viaSink(await createSink(`duckdb:${join(dir, "ours.duckdb")}`))
        : await bareDuckDb(join(dir, "bare.duckdb"));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
  return withSchema((url) => (side === "ours-postgres" ? createSink(url).then(viaSink) : barePostgres(url)));
}

/** Runs one side in a child process of its own: its peak RSS is its own. */
async function spawnSide(side: SideName): Promise<SideResult> {
  const argv = [
    "--import",
    "tsx",
    fileURLToPath(import.meta.url),
    "--side",
    side,
    "--rows",
    String(ROWS),
    "--batch",
    String(BATCH),
  ];
  const child = spawn(process.execPath, argv, { stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  child.stdout.on("data", (d: Buffer) => {
    out += d.toString();
  });
  const [code] = (await once(child, "exit")) as [number | null];
  if (code !== 0) throw new Error(`side ${side} exited with ${code}`);
  return SideResult.parse(JSON.parse(out.trim().split("\n").at(-1) ?? "{}"));
}

function line(name: string, ours: SideResult, bare: SideResult, bareName: string): void {
  const ratio = ours.rowsPerS / bare.rowsPerS;
  console.log(
    `${name.padEnd(10)} our sink ${Math.round(ours.rowsPerS).toLocaleString("en").padStart(9)} rows/s, peak RSS ${ours.maxRssMb.toFixed(0)} MB   ` +
      `${bareName} ${Math.round(bare.rowsPerS).toLocaleString("en").padStart(9)} rows/s, peak RSS ${bare.maxRssMb.toFixed(0)} MB   ` +
      `ratio ${(ratio * 100).toFixed(0)}% ${ratio >= 0.5 ? "(goal ≥ 50%: met)" : "(goal ≥ 50%: MISSED)"}`,
  );
}

if (args.side) {
  const side = SIDES.find((x) => x === args.side);
  if (!side) throw new Error(`--side ${args.side}: one of ${SIDES.join(", ")}`);
  const rowsPerS = await runSide(side);
  process.stdout.write(`${JSON.stringify({ rowsPerS, maxRssMb: process.resourceUsage().maxRSS / 1024 })}\n`);
} else {
  console.log(
    `${ROWS.toLocaleString("en")} participant records, ${columns.length} columns, commits of ${BATCH} rows, ` +
      `best of ${REPEAT} alternated runs each; generation and conversion untimed; peak RSS per side's process`,
  );
  for (const db of ["duckdb", "postgres"] as const) {
    if (args.only && args.only !== db) continue;
    let ours: SideResult | undefined;
    let bare: SideResult | undefined;
    for (let i = 0; i < REPEAT; i++) {
      const o = await spawnSide(`ours-${db}`);
      const b = await spawnSide(`bare-${db}`);
      ours = {
        rowsPerS: Math.max(o.rowsPerS, ours?.rowsPerS ?? 0),
        maxRssMb: Math.max(o.maxRssMb, ours?.maxRssMb ?? 0),
      };
      bare = {
        rowsPerS: Math.max(b.rowsPerS, bare?.rowsPerS ?? 0),
        maxRssMb: Math.max(b.maxRssMb, bare?.maxRssMb ?? 0),
      };
    }
    if (!ours || !bare) throw new Error("no runs");
    line(
      db === "duckdb" ? "DuckDB" : "PostgreSQL",
      ours,
      bare,
      db === "duckdb" ? "bare Appender" : "bare COPY",
    );
  }
}
