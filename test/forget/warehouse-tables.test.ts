import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import { afterEach, describe, expect, it } from "vitest";
import { forgetInDuckDb } from "../../src/forget/duckdb-warehouse.ts";
import { FORGET_TABLES } from "../../src/forget/forget-tables.ts";
import { forgetInPostgres } from "../../src/forget/postgres-warehouse.ts";
import { whoFrom } from "../../src/forget/who.ts";
import { type TestSchema, withTestSchema } from "../helpers/postgres.ts";

// The person is named only by an additional email; their message and incentive only by their ids.
const TABLES = (textArray: string, json: string) => [
  `CREATE TABLE participants (participant_id TEXT PRIMARY KEY, person_id TEXT, email TEXT, additional_emails ${textArray}, phone TEXT, additional_phones ${textArray}, _raw ${json})`,
  `CREATE TABLE email_messages (id TEXT PRIMARY KEY, recipient_id TEXT, participant_id TEXT, recipient_email TEXT, _raw ${json})`,
  `CREATE TABLE incentives (incentive_id TEXT PRIMARY KEY, person_id TEXT, participant_id TEXT, recipient_email TEXT, _raw ${json})`,
];
const ROWS = [
  `INSERT INTO participants VALUES ('participant_1', 'person_1', 'primary@wh.example', ['Other.Address@wh.example'], NULL, ['+441632960001'], '{}'),
     ('participant_2', 'person_2', 'keep@wh.example', [], NULL, [], '{"note":"knows other.address@wh.example.org"}')`,
  `INSERT INTO email_messages VALUES ('m1', 'person_1', NULL, NULL, '{}'), ('m2', 'person_2', 'participant_2', 'keep@wh.example', '{}')`,
  `INSERT INTO incentives VALUES ('i1', NULL, 'participant_1', NULL, '{}'), ('i2', 'person_2', NULL, NULL, '{}')`,
];

const removedOf = (r: { table: string; removed: number }[]) =>
  Object.fromEntries(r.map((t) => [t.table, t.removed]));

let dir: string | undefined;
let pg: TestSchema | undefined;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  await pg?.cleanup();
  dir = undefined;
  pg = undefined;
});

describe("forgetting in the warehouse tables", () => {
  it("DuckDB: follows an additional email to the person's ids, and leaves no byte of them in the file", async () => {
    dir = await mkdtemp(path.join(tmpdir(), "forget-duck-"));
    const file = path.join(dir, "wh.duckdb");
    const instance = await DuckDBInstance.create(file);
    const conn = await instance.connect();
    for (const sql of [...TABLES("VARCHAR[]", "JSON"), ...ROWS]) await conn.run(sql);
    conn.closeSync();
    instance.closeSync();
    expect((await readFile(file)).toString("latin1")).toContain("primary@wh.example");

    const removed = await forgetInDuckDb(file, FORGET_TABLES, whoFrom(["other.address@WH.example"]));
    expect(removedOf(removed)).toEqual({ participants: 1, email_messages: 1, incentives: 1 });
    expect((await readFile(file)).toString("latin1")).not.toMatch(
      /primary@wh\.example|other\.address@wh\.example(?!\.org)|441632960001/i,
    );
    const check = await DuckDBInstance.create(file);
    const c = await check.connect();
    const left = (await c.runAndReadAll("SELECT participant_id FROM participants")).getRowsJS();
    const messages = (await c.runAndReadAll("SELECT id FROM email_messages")).getRowsJS();
    c.closeSync();
    check.closeSync();
    expect(left).toEqual([["participant_2"]]);
    expect(messages).toEqual([["m2"]]);
  });

  it("PostgreSQL: a phone among additional phones leads to the person's ids, and every row naming them goes", async () => {
    pg = await withTestSchema();
    const inserts = ROWS.map((sql) =>
      sql.replaceAll("[]", "'{}'").replaceAll(/\['([^']*)'\]/g, "ARRAY['$1']"),
    );
    for (const sql of [...TABLES("text[]", "jsonb"), ...inserts]) await pg.pool.query(sql);
    const removed = await forgetInPostgres(pg.url, FORGET_TABLES, whoFrom(["+44 1632 960001"]));
    expect(removedOf(removed)).toEqual({ participants: 1, email_messages: 1, incentives: 1 });
    const { rows } = await pg.pool.query("SELECT participant_id FROM participants");
    expect(rows).toEqual([{ participant_id: "participant_2" }]);
    const incentives = await pg.pool.query("SELECT incentive_id FROM incentives");
    expect(incentives.rows).toEqual([{ incentive_id: "i2" }]);
  });
});
