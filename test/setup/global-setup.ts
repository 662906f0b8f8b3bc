import { spawnSync } from "node:child_process";
import pg from "pg";
import { redisAnswers } from "../../src/cli/demo/ensure-redis.ts";
import { DATABASE_URL, REDIS_URL } from "../helpers/env.ts";

async function postgresAnswers(): Promise<string | undefined> {
  const c = new pg.Client({ connectionString: DATABASE_URL, connectionTimeoutMillis: 3000 });
  try {
    await c.connect();
    await c.query("select 1");
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  } finally {
    await c.end().catch(() => {});
  }
}

/** Makes sure Redis and PostgreSQL answer before any test runs, and says what to start when not. */
export default async function setup(): Promise<void> {
  if (!(await redisAnswers(REDIS_URL))) {
    const url = new URL(REDIS_URL);
    if (!process.env.REDIS_URL) {
      spawnSync("redis-server", [
        "--port",
        url.port || "6379",
        "--save",
        "",
        "--appendonly",
        "no",
        "--daemonize",
        "yes",
      ]);
    }
    if (!(await redisAnswers(REDIS_URL))) {
      throw new Error(
        `Redis does not answer at ${REDIS_URL}: start one with 'redis-server --port 6379 --save "" --daemonize yes' or set REDIS_URL`,
      );
    }
  }
  const pgError = await postgresAnswers();
  if (pgError) {
    throw new Error(
      `PostgreSQL does not answer at ${DATABASE_URL} (${pgError}): start it with 'pg_ctlcluster <version> main start' or set DATABASE_URL`,
    );
  }
}
