import path from "node:path";
import type { Cluster, Redis } from "ioredis";
import type { Logger } from "pino";
import type { RuntimeConfig } from "../config/index.ts";
import { purgeSyncLog, retentionCutoff } from "../synclog/purge.ts";
import { removeStaleLogParts } from "../synclog/stale-parts.ts";

/** How often a worker asks whether the day's purge is due. */
const CHECK_EVERY_MS = 3_600_000;

/**
 * The sync_log retention purge, once a day across the fleet: the worker that
 * first finds the day's key missing purges, then sets it for a day. Each
 * worker also removes, every hour, the log parts of its own data folder
 * older than the retention (removeStaleLogParts). A purge
 * that fails (a DuckDB file another process holds) is tried again at the
 * next hourly check. Returns the timer's stop.
 */
export function schedulePurge(config: RuntimeConfig, redis: Redis | Cluster, logger: Logger): () => void {
  if (!config.syncLog.enabled) return () => {};
  const key = `${config.redis.prefix}:synclog:purged`;
  const tick = async () => {
    const before = retentionCutoff(config.syncLog.retentionDays);
    // Every worker sweeps its own data folder: workers on other machines have folders of their own.
    const parts = await removeStaleLogParts(path.resolve(config.paths.dataDir, "imports"), before);
    if (parts > 0) logger.info({ parts, before: before.toISOString() }, "stale sync log parts removed");
    if (await redis.exists(key)) return;
    const removed = await purgeSyncLog(config.warehouse.url, before);
    await redis.set(key, before.toISOString(), "EX", 86_400 - 60);
    logger.info({ removed, before: before.toISOString() }, "sync log purged");
  };
  const run = () => {
    tick().catch((err: unknown) =>
      logger.warn(
        { err: err instanceof Error ? err.message : String(err) },
        "sync log purge failed; tried again within the hour",
      ),
    );
  };
  const first = setTimeout(run, 60_000);
  const timer = setInterval(run, CHECK_EVERY_MS);
  first.unref();
  timer.unref();
  return () => {
    clearTimeout(first);
    clearInterval(timer);
  };
}
