/**
 * Loads the same participant records (1,000,000 by default) through our sinks
 * and through the bare bulk path of the same database: DuckDB's Appender into
 * an unkeyed table, PostgreSQL's COPY into an unkeyed table. Goal: our sink at
 * ≥ 50% of the bare rows/s for each.
 *
 *   npx tsx bench/sink-bench.ts [--rows 1000000] [--only duckdb|postgres] [--batch 5000] [--repeat 1]
 *
 * PostgreSQL: DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test);
 * the bench makes its own schema and drops it.
 */
import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { parseArgs } from "node:util";
import { DuckDBInstance, LIST, listValue, timestampValue, VARCHAR } from "@duckdb/node-api";
import pg from "pg";
import { from as copyFrom } from "pg-copy-streams";
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
    repeat: { type: "string", default: "1" },
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

async function viaSink(sink: Sink): Promise<number> {
  await sink.prepare([table.table]);
  const t = performance.now();
  let pages = 0;
  // As the streams do: one commit in flight while the next batch is being made.
  let pending: Promise<unknown> | undefined;
  for (const rows of rowBatches(ROWS, BATCH)) {
    await pending;
    pages++;
    // The rows with the stream's cursor and its sync_runs row, as one checkpoint.
    pending = sink.commit({
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
  }
  await pending;
  // Closing checkpoints DuckDB's write-ahead log into the file: part of the load.
  await sink.close();
  return (ROWS / (performance.now() - t)) * 1000;
}

async function bareDuckDb(path: string): Promise<number> {
  const instance = await DuckDBInstance.create(path);
  const conn = await instance.connect();
  await conn.run(
    `CREATE TABLE bare (${columns.map((c) => `"${c.name}" ${DUCKDB_TYPES[c.type]}`).join(", ")})`,
  );
  const t = performance.now();
  const appender = await conn.createAppender("bare");
  const synced = timestampValue(BigInt(Date.now()) * 1000n);
  const list = LIST(VARCHAR);
  for (const rows of rowBatches(ROWS, BATCH)) {
    for (const row of rows) {
      for (const c of columns) {
        const v = c.name === "_synced_at" ? "" : c.name === "_run_id" ? RUN_ID : row[c.name];
        if (c.name === "_synced_at") appender.appendTimestamp(synced);
        else if (v === null || v === undefined) appender.appendNull();
        else if (c.type === "timestamp")
          appender.appendTimestamp(timestampValue(BigInt(Date.parse(String(v))) * 1000n));
        else if (c.type === "text_array") appender.appendList(listValue(v as string[]), list);
        else if (c.type === "json") appender.appendVarchar(JSON.stringify(v));
        else appender.appendVarchar(String(v));
      }
      appender.endRow();
    }
  }
  appender.flushSync();
  appender.closeSync();
  conn.closeSync();
  instance.closeSync();
  return (ROWS / (performance.now() - t)) * 1000;
}

function copyText(v: unknown): string {
  return String(v).replace(/[\\\t\n\r]/g, (c) =>
    c === "\\" ? "\\\\" : c === "\t" ? "\\t" : c === "\n" ? "\\n" : "\\r",
  );
}

async function barePostgres(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query(
    `CREATE TABLE bare (${columns.map((c) => `"${c.name}" ${POSTGRES_TYPES[c.type]}`).join(", ")})`,
  );
  const t = performance.now();
  const synced = new Date().toISOString();
  function* lines(): Generator<string> {
    for (const rows of rowBatches(ROWS, BATCH)) {
      let chunk = "";
      for (const row of rows) {
        const fields = columns.map((c) => {
          const v = c.name === "_synced_at" ? synced : c.name === "_run_id" ? RUN_ID : row[c.name];
          if (v === null || v === undefined) return "\\N";
          if (c.type === "text_array") return copyText(`{${(v as string[]).map((s) => `"${s}"`).join(",")}}`);
          if (c.type === "json") return copyText(JSON.stringify(v));
          return copyText(v);
        });
        chunk += `${fields.join("\t")}\n`;
      }
      yield chunk;
    }
  }
  await pipeline(Readable.from(lines()), client.query(copyFrom("COPY bare FROM STDIN")));
  const rate = (ROWS / (performance.now() - t)) * 1000;
  await client.end();
  return rate;
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

function line(name: string, ours: number, bare: number, bareName: string): void {
  const ratio = ours / bare;
  console.log(
    `${name.padEnd(10)} our sink ${Math.round(ours).toLocaleString("en").padStart(9)} rows/s   ${bareName} ${Math.round(bare).toLocaleString("en").padStart(9)} rows/s   ratio ${(ratio * 100).toFixed(0)}% ${ratio >= 0.5 ? "(goal ≥ 50%: met)" : "(goal ≥ 50%: MISSED)"}`,
  );
}

console.log(
  `${ROWS.toLocaleString("en")} participant records, ${columns.length} columns, commits of ${BATCH} rows` +
    (REPEAT > 1 ? `, best of ${REPEAT} runs each` : ""),
);
if (args.only !== "postgres") {
  let ours = 0;
  let bare = 0;
  for (let i = 0; i < REPEAT; i++) {
    const dir = await mkdtemp(join(tmpdir(), "sink-bench-"));
    try {
      ours = Math.max(ours, await viaSink(await createSink(`duckdb:${join(dir, "ours.duckdb")}`)));
      bare = Math.max(bare, await bareDuckDb(join(dir, "bare.duckdb")));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
  line("DuckDB", ours, bare, "bare Appender");
}
if (args.only !== "duckdb") {
  let ours = 0;
  let bare = 0;
  for (let i = 0; i < REPEAT; i++) {
    await withSchema(async (url) => {
      ours = Math.max(ours, await viaSink(await createSink(url)));
      bare = Math.max(bare, await barePostgres(url));
    });
  }
  line("PostgreSQL", ours, bare, "bare COPY");
}
