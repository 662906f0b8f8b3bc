import pLimit from "p-limit";
import { FINAL_INCENTIVE_STATUSES, NotFoundApiError } from "../../api/index.ts";
import { readIncentiveIdsFile } from "../incentive-ids.ts";
import type { StreamContext } from "../stream-context.ts";
import { EXPORT_TABLES } from "../tables.ts";
import type { DerivedTable } from "../zod-columns.ts";

/** Requests in flight at once for single-record reads; the rate governor still paces them. */
const FETCH_CONCURRENCY = 4;

/**
 * The spec has no incentive listing: the ids come from the definition's
 * sources, and an incentive already in a final state is never read again.
 */
export async function incentiveIdsToRead(ctx: StreamContext): Promise<string[]> {
  const src = ctx.definition.incentives;
  const table = EXPORT_TABLES.incentives.table.name;
  const wanted = new Set<string>(src.ids);
  if (src.idsFile) for (const id of await readIncentiveIdsFile(src.idsFile, ctx.signal)) wanted.add(id);
  const open = await ctx.sink.readKeys({
    table,
    column: "incentive_id",
    exclude: { column: "status", notIn: FINAL_INCENTIVE_STATUSES },
  });
  if (src.fromWarehouse) for (const id of open) wanted.add(id);
  if (wanted.size > 0) {
    const openSet = new Set(open);
    const known = await ctx.sink.readKeys({ table, column: "incentive_id" });
    for (const id of known) if (!openSet.has(id)) wanted.delete(id);
  }
  return [...wanted].sort();
}

/**
 * Reads ids in batches of the page size, GET by GET, and commits each batch:
 * a killed run loses at most one batch, and the next run skips what became
 * final. The stream is named after its table: one stream per table.
 */
async function readInBatches<T extends Readonly<Record<string, unknown>>>(
  ctx: StreamContext,
  table: DerivedTable,
  ids: readonly string[],
  fetch: (id: string) => Promise<T>,
): Promise<void> {
  const stream = table.table.name;
  const limit = pLimit(FETCH_CONCURRENCY);
  const size = ctx.definition.pageSize;
  for (let i = 0; i < ids.length; i += size) {
    ctx.signal?.throwIfAborted();
    const batch = ids.slice(i, i + size);
    const records = await Promise.all(
      batch.map((id) =>
        limit(async () => {
          ctx.counters.requests++;
          try {
            const record = await fetch(id);
            ctx.answered();
            return record;
          } catch (err) {
            if (err instanceof NotFoundApiError) {
              ctx.answered();
              ctx.counters.missing++;
              ctx.logger?.warn({ stream, id }, "not found; skipped");
              return undefined;
            }
            ctx.failing(err);
            throw err;
          }
        }),
      ),
    );
    ctx.signal?.throwIfAborted();
    const rows = records.filter((r) => r !== undefined).map((r) => table.toRow(r));
    ctx.counters.pages++;
    ctx.counters.rows += rows.length;
    await ctx.checkpoint(stream, { upsert: { table: stream, rows } });
  }
}

/** Incentives by id: one stream of single reads, FETCH_CONCURRENCY at a time. */
export function exportIncentives(ctx: StreamContext): Promise<void> {
  return ctx.inSlot(async () => {
    const ids = await incentiveIdsToRead(ctx);
    await readInBatches(ctx, EXPORT_TABLES.incentives, ids, (id) =>
      ctx.client.getIncentive(id, { signal: ctx.signal }),
    );
  });
}

/**
 * Custom incentive definitions referenced by the incentives in the warehouse,
 * re-read every run: they are few, and their names and options can change.
 */
export function exportCustomIncentives(ctx: StreamContext): Promise<void> {
  return ctx.inSlot(async () => {
    const ids = await ctx.sink.readKeys({
      table: EXPORT_TABLES.incentives.table.name,
      column: "custom_incentive_id",
      liveOnly: true,
    });
    await readInBatches(ctx, EXPORT_TABLES.custom_incentives, ids, (id) =>
      ctx.client.getCustomIncentive(id, { signal: ctx.signal }),
    );
  });
}
