import { constants } from "node:fs";
import { access, stat } from "node:fs/promises";
import path from "node:path";
import { Cluster, type Redis } from "ioredis";
import type { RuntimeConfig } from "../config/index.ts";
import { readInvalidDefinitions } from "../queue/schedulers.ts";
import { parseWarehouseUrl } from "../sinks/warehouse-url.ts";

/** A probe that takes longer than this counts as down: a readiness check must answer quickly. */
const PROBE_TIMEOUT_MS = 2000;

/**
 * - ok: as it should be;
 * - degraded: it works, but loses jobs when something goes wrong (a Redis
 *   that keeps nothing on disk, or evicts keys): reported, the answer stays 200;
 * - unknown: could not be read (CONFIG and INFO refused): reported, not failing;
 * - down: cannot work now: /readyz answers 503.
 */
export type CheckState = "ok" | "degraded" | "unknown" | "down";

export interface Check {
  name: "redis" | "redis-persistence" | "redis-eviction" | "warehouse" | "job-definitions";
  /** False only when the state is down: what a probe fails on. */
  ok: boolean;
  state: CheckState;
  /** What is wrong, in a few words; no passwords. */
  detail: string;
  /** What to do about a degraded or unknown check. */
  fix?: string;
}

const up = (name: Check["name"], detail: string): Check => ({ name, ok: true, state: "ok", detail });
const down = (name: Check["name"], detail: string): Check => ({ name, ok: false, state: "down", detail });

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
  if (redis.status !== "ready") return down("redis", `connection ${redis.status}`);
  try {
    await withTimeout(redis.ping(), "PING");
    return up("redis", "PING answered");
  } catch (err) {
    return down("redis", message(err));
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
      return up("warehouse", "PostgreSQL answered");
    }
    if (target.kind === "duckdb") {
      if (target.path === ":memory:") return up("warehouse", "in memory");
      const file = await stat(target.path).catch(() => undefined);
      if (file) await access(target.path, constants.R_OK | constants.W_OK);
      else await writableFolder(path.dirname(target.path));
      return up("warehouse", file ? "DuckDB file writable" : "DuckDB folder writable");
    }
    await writableFolder(target.dir);
    return up("warehouse", "folder writable");
  } catch (err) {
    // A driver's message may quote the URL; keep any password out of the answer.
    return down("warehouse", message(err).replace(/\/\/[^@/\s]*@/g, "//***@"));
  }
}

/** What a Redis node says of keeping its data: undefined where it would not say. */
interface RedisDurability {
  appendonly?: boolean;
  /** RDB save points, "" for none; INFO does not show them. */
  save?: string;
  maxmemoryPolicy?: string;
  /** Where the answers came from: managed Redis often refuses CONFIG. */
  source: "CONFIG" | "INFO" | "nothing";
}

async function configGet(node: Redis, parameter: string): Promise<string | undefined> {
  try {
    const answer = (await withTimeout(node.config("GET", parameter), "CONFIG GET")) as unknown;
    return Array.isArray(answer) && typeof answer[1] === "string" ? answer[1] : undefined;
  } catch {
    return undefined;
  }
}

async function infoFields(node: Redis, section: string): Promise<Map<string, string>> {
  const fields = new Map<string, string>();
  try {
    const text = await withTimeout(node.info(section), "INFO");
    for (const line of text.split(/\r?\n/)) {
      const at = line.indexOf(":");
      if (at > 0 && !line.startsWith("#")) fields.set(line.slice(0, at), line.slice(at + 1).trim());
    }
  } catch {}
  return fields;
}

/** CONFIG GET first; where CONFIG is disabled (managed Redis), INFO persistence and INFO memory. */
async function readDurability(node: Redis): Promise<RedisDurability> {
  const [appendonly, save, policy] = await Promise.all([
    configGet(node, "appendonly"),
    configGet(node, "save"),
    configGet(node, "maxmemory-policy"),
  ]);
  if (appendonly !== undefined && save !== undefined && policy !== undefined) {
    return { appendonly: appendonly === "yes", save: save.trim(), maxmemoryPolicy: policy, source: "CONFIG" };
  }
  const [persistence, memory] = await Promise.all([
    infoFields(node, "persistence"),
    infoFields(node, "memory"),
  ]);
  const aof = appendonly ?? persistence.get("aof_enabled");
  const result: RedisDurability = {
    source: persistence.size || memory.size ? "INFO" : "nothing",
    ...(aof === undefined ? {} : { appendonly: aof === "yes" || aof === "1" }),
    ...(save === undefined ? {} : { save: save.trim() }),
  };
  const evicts = policy ?? memory.get("maxmemory_policy");
  if (evicts !== undefined) result.maxmemoryPolicy = evicts;
  if (appendonly !== undefined || policy !== undefined) result.source = "CONFIG";
  return result;
}

const AOF_FIX =
  "turn on AOF: appendonly yes in redis.conf (CONFIG SET appendonly yes applies it at once), or the managed service's persistence setting";
const EVICTION_FIX =
  "set maxmemory-policy noeviction in redis.conf (CONFIG SET maxmemory-policy noeviction), or in the managed service's parameters";

function judgePersistence(d: RedisDurability, where: string): Check {
  if (d.appendonly) return up("redis-persistence", `${where}AOF on (appendonly yes)`);
  if (d.appendonly === false && d.save) {
    return up(
      "redis-persistence",
      `${where}RDB snapshots only (save ${d.save}): a crash loses what changed since the last one; AOF (appendonly yes) keeps it`,
    );
  }
  if (d.appendonly === false && d.save === "") {
    return {
      name: "redis-persistence",
      ok: true,
      state: "degraded",
      detail: `${where}nothing is kept on disk (appendonly no, no save points): a restart of Redis loses every queued job, schedule and import record`,
      fix: AOF_FIX,
    };
  }
  return {
    name: "redis-persistence",
    ok: true,
    state: "unknown",
    detail:
      d.appendonly === false
        ? `${where}AOF is off, and whether RDB snapshots are taken cannot be read (CONFIG is refused)`
        : `${where}cannot be read: CONFIG GET and INFO persistence are refused`,
    fix: `make sure the Redis keeps its data on disk: ${AOF_FIX}`,
  };
}

function judgeEviction(d: RedisDurability, where: string): Check {
  if (d.maxmemoryPolicy === undefined) {
    return {
      name: "redis-eviction",
      ok: true,
      state: "unknown",
      detail: `${where}maxmemory-policy cannot be read: CONFIG GET and INFO memory are refused`,
      fix: `make sure Redis never evicts keys: ${EVICTION_FIX}`,
    };
  }
  if (d.maxmemoryPolicy === "noeviction") return up("redis-eviction", `${where}maxmemory-policy noeviction`);
  return {
    name: "redis-eviction",
    ok: true,
    state: "degraded",
    detail: `${where}maxmemory-policy ${d.maxmemoryPolicy}: when memory runs out Redis deletes keys, and jobs, their locks and the rate budget vanish`,
    fix: EVICTION_FIX,
  };
}

/** The worse of two checks of the same name, for a cluster's nodes. */
const RANK: Record<CheckState, number> = { ok: 0, unknown: 1, degraded: 2, down: 3 };

/**
 * Whether Redis keeps the queues: something on disk (AOF, or at least RDB
 * save points) and `maxmemory-policy noeviction`. Read with CONFIG GET, or
 * INFO where a managed Redis refuses CONFIG; on a Redis Cluster, every master.
 * Never down: a Redis that would lose jobs still runs them, so this is
 * `degraded` (or `unknown`), not a reason to stop sending work.
 */
export async function checkRedisDurability(redis: Redis | Cluster): Promise<Check[]> {
  if (redis.status !== "ready") {
    const detail = "not checked: Redis does not answer";
    return [
      { name: "redis-persistence", ok: true, state: "unknown", detail },
      { name: "redis-eviction", ok: true, state: "unknown", detail },
    ];
  }
  const nodes = redis instanceof Cluster ? redis.nodes("master") : [redis];
  const judged = await Promise.all(
    nodes.map(async (node) => {
      const where = redis instanceof Cluster ? `${node.options.host}:${node.options.port}: ` : "";
      const durability = await readDurability(node);
      return [judgePersistence(durability, where), judgeEviction(durability, where)];
    }),
  );
  const worst = (i: number) =>
    judged.map((pair) => pair[i] as Check).reduce((a, b) => (RANK[b.state] > RANK[a.state] ? b : a));
  return [worst(0), worst(1)];
}

/**
 * The job definitions the workers' last reconcile found invalid (kept in
 * Redis by schedulers.ts). Degraded, not down: the other jobs run, and a
 * scheduled one keeps running with its last valid definition.
 */
export async function checkJobDefinitions(redis: Redis | Cluster, prefix: string): Promise<Check> {
  if (redis.status !== "ready") {
    return {
      name: "job-definitions",
      ok: true,
      state: "unknown",
      detail: "not checked: Redis does not answer",
    };
  }
  try {
    const invalid = Object.values(await withTimeout(readInvalidDefinitions(redis, prefix), "HGETALL"));
    if (invalid.length === 0)
      return up("job-definitions", "every definition of jobs/ validated at the last reconcile");
    const files = invalid.map(
      (d) =>
        `${path.basename(d.file)}${d.scheduleKept ? " (its schedule runs with the last valid definition)" : ""}`,
    );
    return {
      name: "job-definitions",
      ok: true,
      state: "degraded",
      detail: `invalid since the workers last read jobs/: ${files.join(", ")}`,
      fix: "run 'recruit-sync jobs validate' and mend each file; the workers take it up within queue.reconcileMs",
    };
  } catch (err) {
    return { name: "job-definitions", ok: true, state: "unknown", detail: message(err) };
  }
}

export interface Readiness {
  /** 503 when a check is down; 200 otherwise, degraded included. */
  httpStatus: 200 | 503;
  body: {
    status: "ready" | "degraded" | "unavailable";
    down?: string[];
    degraded?: string[];
    checks: Check[];
  };
}

/**
 * /readyz's answer. Degraded is 200, not 503: a failing readiness probe takes
 * the pod out of service and a failing liveness probe restarts it, neither of
 * which gives Redis a disk; the problem is in the answer for people and alerts.
 */
export async function readiness(config: RuntimeConfig, redis: Redis | Cluster): Promise<Readiness> {
  const [ping, durability, warehouse, definitions] = await Promise.all([
    checkRedis(redis as Redis),
    checkRedisDurability(redis),
    checkWarehouse(config.warehouse.url),
    checkJobDefinitions(redis, config.redis.prefix),
  ]);
  const checks = [ping, ...durability, warehouse, definitions];
  const named = (state: CheckState) =>
    checks.filter((c) => c.state === state).map((c) => `${c.name}: ${c.detail}${c.fix ? `; ${c.fix}` : ""}`);
  const downs = named("down");
  const degraded = named("degraded");
  return {
    httpStatus: downs.length ? 503 : 200,
    body: {
      status: downs.length ? "unavailable" : degraded.length ? "degraded" : "ready",
      ...(downs.length ? { down: downs } : {}),
      ...(degraded.length ? { degraded } : {}),
      checks,
    },
  };
}
