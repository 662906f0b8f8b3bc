import { spawnSync } from "node:child_process";
import pg from "pg";
import { redisAnswers } from "../../src/cli/demo/ensure-redis.ts";
import { DATABASE_URL, REDIS_URL } from "../helpers/env.ts";

/** PostgreSQL's code for "database … does not exist". */
const NO_SUCH_DATABASE = "3D000";

async function postgresAnswers(
  url: string,
): Promise<{ ok: true } | { ok: false; code?: string; message: string }> {
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await c.connect();
    await c.query("select 1");
    return { ok: true };
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    return {
      ok: false,
      ...(typeof code === "string" ? { code } : {}),
      message: err instanceof Error ? err.message : String(err),
    };
  } finally {
    await c.end().catch(() => {});
  }
}

/**
 * On a fresh machine the server answers but the tests' database is not
 * there yet: create it from the server's `postgres` database, as `createdb`
 * would. Undefined when done, else why not.
 */
async function createTestDatabase(url: URL): Promise<string | undefined> {
  const name = decodeURIComponent(url.pathname.slice(1));
  const admin = new URL(url.href);
  admin.pathname = "/postgres";
  const c = new pg.Client({ connectionString: admin.href, connectionTimeoutMillis: 3000 });
  try {
    await c.connect();
    await c.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
    return undefined;
  } catch (err) {
    // Two suites starting at once: the other one made it.
    if ((err as { code?: unknown }).code === "42P04") return undefined;
    return err instanceof Error ? err.message : String(err);
  } finally {
    await c.end().catch(() => {});
  }
}

/** Makes sure PostgreSQL answers with the tests' database, creating the database when only it is missing. */
async function ensurePostgres(): Promise<void> {
  const url = new URL(DATABASE_URL);
  const where = `${url.hostname}:${url.port || "5432"}`;
  const first = await postgresAnswers(DATABASE_URL);
  if (first.ok) return;
  if (first.code?.startsWith("28")) {
    // 28000, 28P01: the server answers, the user or its password is refused.
    throw new Error(
      `PostgreSQL at ${where} refuses user ${url.username || "postgres"} (${first.message}): set DATABASE_URL to postgres://USER:PASSWORD@${where}/test with a user that may create databases, or allow trust for 127.0.0.1 in pg_hba.conf`,
    );
  }
  if (first.code !== NO_SUCH_DATABASE) {
    throw new Error(
      `PostgreSQL does not answer at ${where} (${first.message}): start it (Debian/Ubuntu: 'apt-get install -y postgresql && service postgresql start'; or 'docker run -d -p 5432:5432 -e POSTGRES_HOST_AUTH_METHOD=trust postgres:16'), or set DATABASE_URL to one that runs`,
    );
  }
  const failed = await createTestDatabase(url);
  if (failed) {
    throw new Error(
      `PostgreSQL answers at ${where} but has no database ${url.pathname.slice(1)}, and creating it failed (${failed}): create it with 'createdb -h ${url.hostname} -U ${url.username || "postgres"} ${url.pathname.slice(1)}', or set DATABASE_URL to a database the tests may use`,
    );
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
  await ensurePostgres();
}
