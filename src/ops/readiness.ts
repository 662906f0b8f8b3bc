import { constants } from "node:fs";
import { access, stat } from "node:fs/promises";
import path from "node:path";
import type { Redis } from "ioredis";
import { parseWarehouseUrl } from "../sinks/warehouse-url.ts";

/** A probe that takes longer than this counts as down: a readiness check must answer quickly. */
const PROBE_TIMEOUT_MS = 2000;

export interface Check {
  name: "redis" | "warehouse";
  ok: boolean;
  /** What is wrong, in a few words; no passwords. */
  detail: string;
}

function withTimeout<T>(work: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${what}: no answer within ${PROBE_TIMEOUT_MS} ms`)),
      PROBE_TIMEOUT_MS,
    );
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

/**
 * Redis answers PING. A connection that is reconnecting is down at once: its
 * commands would wait in the offline queue instead of failing.
 */
export async function checkRedis(redis: Redis): Promise<Check> {
  if (redis.status !== "ready") return { name: "redis", ok: false, detail: `connection ${redis.status}` };
  try {
    await withTimeout(redis.ping(), "PING");
    return { name: "redis", ok: true, detail: "PING answered" };
  } catch (err) {
    return { name: "redis", ok: false, detail: message(err) };
  }
}

/** The folder a path is in, or the nearest one that exists: the sinks create the rest. */
async function writableFolder(target: string): Promise<string> {
  let dir = path.resolve(target);
  for (;;) {
    const found = await stat(dir).catch(() => undefined);
    if (found?.isDirectory()) {
      await access(dir, constants.W_OK);
      return dir;
    }
    if (found) throw new Error(`${dir} is not a folder`);
    const up = path.dirname(dir);
    if (up === dir) throw new Error(`no folder of ${target} exists`);
    dir = up;
  }
}

/**
 * The configured warehouse can be reached. PostgreSQL: a connection and
 * `select 1`. DuckDB and files: their folder can be written. A DuckDB file
 * admits one writing process, the worker's, so it is not opened here.
 */
export async function checkWarehouse(url: string): Promise<Check> {
  try {
    const target = parseWarehouseUrl(url);
    if (target.kind === "postgres") {
      const { default: pg } = await import("pg");
      const client = new pg.Client({
        connectionString: target.url,
        connectionTimeoutMillis: PROBE_TIMEOUT_MS,
        query_timeout: PROBE_TIMEOUT_MS,
      });
      client.on("error", () => {});
      try {
        await withTimeout(client.connect(), "PostgreSQL");
        await client.query("select 1");
      } finally {
        await client.end().catch(() => {});
      }
      return { name: "warehouse", ok: true, detail: "PostgreSQL answered" };
    }
    if (target.kind === "duckdb") {
      if (target.path === ":memory:") return { name: "warehouse", ok: true, detail: "in memory" };
      const file = await stat(target.path).catch(() => undefined);
      if (file) await access(target.path, constants.R_OK | constants.W_OK);
      else await writableFolder(path.dirname(target.path));
      return {
        name: "warehouse",
        ok: true,
        detail: file ? "DuckDB file writable" : "DuckDB folder writable",
      };
    }
    await writableFolder(target.dir);
    return { name: "warehouse", ok: true, detail: "folder writable" };
  } catch (err) {
    // A driver's message may quote the URL; keep any password out of the answer.
    return { name: "warehouse", ok: false, detail: message(err).replace(/\/\/[^@/\s]*@/g, "//***@") };
  }
}
