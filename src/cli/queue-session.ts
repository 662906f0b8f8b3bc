import type { RuntimeConfig } from "../config/index.ts";
import { type JobProgress, openQueues, type Queues } from "../queue/index.ts";
import { connectRedis, type RedisConnection } from "../runtime/index.ts";

/** The queues as the CLI uses them: one connection, a clear line when Redis is not there. */
export async function openQueueSession(
  config: RuntimeConfig,
): Promise<{ queues: Queues; close(): Promise<void> }> {
  const redis: RedisConnection = await connectRedis(config, "the queues live there; or run with --inline");
  const queues = openQueues(config, redis);
  return {
    queues,
    async close() {
      await queues.close().catch(() => {});
      redis.disconnect();
    },
  };
}

const n = (v: number) => v.toLocaleString("en-US");

/** One plain line for a job's progress, as `--wait` prints it when the output is not a terminal. */
export function progressLine(state: string, p: JobProgress | undefined): string {
  if (!p || p.kind === "pending") return `${state}${p?.message ? `: ${p.message}` : ""}`;
  const wait = p.budgetWaitMs ? `, ${(p.budgetWaitMs / 1000).toFixed(1)} s waiting on the rate budget` : "";
  const note = p.message && p.message !== "done" ? ` — ${p.message}` : "";
  if (p.kind === "import") {
    const pct = p.bytesTotal ? ` ${Math.min(100, Math.floor((p.bytesRead / p.bytesTotal) * 100))}%` : "";
    return `${state}: ${p.phase}${pct}, ${n(p.rowsRead)} rows read, ${n(p.imported)} imported, ${n(p.rejected)} rejected, ${n(p.batches)} batches${wait}${note}`;
  }
  const parts = Object.entries(p.resources).map(
    ([r, s]) => `${r} ${n(s.rows)} rows/${n(s.pages)} pages (${s.status})`,
  );
  return `${state}: ${parts.join(", ") || "starting"}${wait}${note}`;
}
