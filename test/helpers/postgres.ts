import { randomUUID } from "node:crypto";
import pg from "pg";
import { DATABASE_URL } from "./env.ts";

export interface TestSchema {
  pool: pg.Pool;
  schema: string;
  /** A connection string whose search_path is the test's schema. */
  url: string;
  /** Drops the schema this test made, and only it. */
  cleanup(): Promise<void>;
}

/** A fresh PostgreSQL schema `test_<uuid>` owned by one test. */
export async function withTestSchema(): Promise<TestSchema> {
  const schema = `test_${randomUUID().replaceAll("-", "")}`;
  const admin = new pg.Client({ connectionString: DATABASE_URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA "${schema}"`);
  await admin.end();
  const url = new URL(DATABASE_URL);
  url.searchParams.set("options", `-c search_path=${schema}`);
  const pool = new pg.Pool({ connectionString: url.toString(), max: 4 });
  return {
    pool,
    schema,
    url: url.toString(),
    async cleanup() {
      await pool.end();
      const c = new pg.Client({ connectionString: DATABASE_URL });
      await c.connect();
      await c.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await c.end();
    },
  };
}
