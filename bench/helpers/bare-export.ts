/**
 * The bare baseline of bench/export-bench.ts: the same participants paged
 * from the same emulator with plain fetch and JSON.parse (no validation, no
 * governor, no checkpoints), written by the database's own bulk path into an
 * unkeyed table — DuckDB's Appender, PostgreSQL's COPY — or as CSV lines to a
 * file. Prints `{"rows","seconds"}`; the parent reads this process's peak RSS.
 *
 *   npx tsx bench/helpers/bare-export.ts --base-url URL --study S --kind duckdb --target FILE
 */

import { once } from "node:events";
import { createWriteStream } from "node:fs";
import { parseArgs } from "node:util";
import { DuckDBInstance } from "@duckdb/node-api";
import pg from "pg";
import { from as copyFrom } from "pg-copy-streams";

const { values: args } = parseArgs({
  options: {
    "base-url": { type: "string" },
    study: { type: "string" },
    kind: { type: "string" },
    target: { type: "string" },
    token: { type: "string", default: "bench-token" },
    "page-size": { type: "string", default: "100" },
  },
});
const baseUrl = args["base-url"];
const target = args.target;
if (!baseUrl || !args.study || !target) throw new Error("--base-url, --study and --target are required");

const COLUMNS = [
  "participantId",
  "personId",
  "studyId",
  "status",
  "approvalStatus",
  "screenerState",
  "addedToStudyAt",
  "invitedToStudyAt",
] as const;
type Rec = Record<string, unknown>;

async function* pages(): AsyncGenerator<Rec[]> {
  let cursor: string | undefined;
  for (;;) {
    const res = await fetch(`${baseUrl}/studies/${args.study}/participants/search`, {
      method: "POST",
      headers: { authorization: `Bearer ${args.token}`, "content-type": "application/json" },
      body: JSON.stringify({
        pageInfo: { size: Number(args["page-size"]), ...(cursor ? { startCursor: cursor } : {}) },
      }),
    });
    if (!res.ok) throw new Error(`search answered ${res.status}`);
    const page = (await res.json()) as {
      results: Rec[];
      pageInfo: { hasNextPage: boolean; endCursor?: string };
    };
    yield page.results;
    if (!page.pageInfo.hasNextPage || !page.pageInfo.endCursor) return;
    cursor = page.pageInfo.endCursor;
  }
}

const text = (v: unknown) => (v === null || v === undefined ? null : String(v));
const copyField = (v: unknown) =>
  v === null || v === undefined
    ? "\\N"
    : String(v).replace(/[\\\t\n\r]/g, (c) => (c === "\\" ? "\\\\" : " "));
const csvField = (v: unknown) =>
  v === null || v === undefined ? "" : `"${String(v).replaceAll('"', '""')}"`;

let rows = 0;
const t0 = performance.now();
if (args.kind === "duckdb") {
  const instance = await DuckDBInstance.create(target);
  const conn = await instance.connect();
  await conn.run(`CREATE TABLE bare (${COLUMNS.map((c) => `"${c}" VARCHAR`).join(", ")}, raw JSON)`);
  const appender = await conn.createAppender("bare");
  for await (const results of pages()) {
    for (const r of results) {
      for (const c of COLUMNS) {
        const v = text(r[c]);
        if (v === null) appender.appendNull();
        else appender.appendVarchar(v);
      }
      appender.appendVarchar(JSON.stringify(r));
      appender.endRow();
      rows++;
    }
  }
  appender.flushSync();
  appender.closeSync();
  await conn.run("CHECKPOINT");
  conn.closeSync();
  instance.closeSync();
} else if (args.kind === "postgres") {
  const client = new pg.Client({ connectionString: target });
  await client.connect();
  await client.query(`CREATE TABLE bare (${COLUMNS.map((c) => `"${c}" text`).join(", ")}, raw jsonb)`);
  const copy = client.query(copyFrom("COPY bare FROM STDIN"));
  for await (const results of pages()) {
    let chunk = "";
    for (const r of results) {
      chunk += `${[...COLUMNS.map((c) => copyField(r[c])), copyField(JSON.stringify(r))].join("\t")}\n`;
      rows++;
    }
    if (!copy.write(chunk)) await once(copy, "drain");
  }
  copy.end();
  await once(copy, "finish");
  await client.end();
} else if (args.kind === "file") {
  const out = createWriteStream(target, { mode: 0o600 });
  out.write(`${[...COLUMNS, "raw"].join(",")}\n`);
  for await (const results of pages()) {
    let chunk = "";
    for (const r of results) {
      chunk += `${[...COLUMNS.map((c) => csvField(r[c])), csvField(JSON.stringify(r))].join(",")}\n`;
      rows++;
    }
    if (!out.write(chunk)) await once(out, "drain");
  }
  out.end();
  await once(out, "finish");
} else {
  throw new Error(`--kind ${args.kind}: expected duckdb, postgres or file`);
}
process.stdout.write(`${JSON.stringify({ rows, seconds: (performance.now() - t0) / 1000 })}\n`);
