import { z } from "zod";
import { ApiError, type Page } from "../../api/index.ts";
import type { Row } from "../../sinks/index.ts";
import { CommitPipeline } from "../commit-pipeline.ts";
import type { StreamContext } from "../stream-context.ts";

/**
 * State of a full-refresh stream. `pass` is the refresh under way: the runs
 * that have worked on it and the cursor of the next page. A pass survives a
 * killed run, so the next run resumes it instead of starting over, and rows
 * its earlier runs wrote still count as seen.
 */
const FullRefreshState = z.object({
  pass: z
    .object({
      startedAt: z.string(),
      runIds: z.array(z.string()),
      cursor: z.string().nullable(),
    })
    .optional(),
  lastCompletedAt: z.string().optional(),
});
type FullRefreshState = z.infer<typeof FullRefreshState>;

export interface FullRefreshOptions<T> {
  stream: string;
  table: string;
  /** Rows outside it are never soft-deleted by this stream. */
  scope: Readonly<Record<string, string>>;
  pages: (startCursor: string | undefined) => AsyncGenerator<Page<T>>;
  toRow: (record: T) => Row;
}

/**
 * Pages through a whole collection, committing each page with the cursor of
 * the next, then marks `_deleted_at` on rows of the scope that the pass did
 * not see. The last page, the deletions and the end of the pass are one commit.
 */
export async function runFullRefresh<T>(ctx: StreamContext, opts: FullRefreshOptions<T>): Promise<void> {
  const parsed = FullRefreshState.safeParse((await ctx.sink.readState(opts.stream)) ?? {});
  const state: FullRefreshState = parsed.success ? parsed.data : {};
  const pass = state.pass ?? { startedAt: ctx.now().toISOString(), runIds: [], cursor: null };
  if (!pass.runIds.includes(ctx.runId)) pass.runIds.push(ctx.runId);
  const resumed = pass.cursor !== null;
  try {
    await pagesFrom(ctx, opts, state, pass);
  } catch (err) {
    // A cursor saved by an earlier run may have expired: start the same pass from the top.
    if (resumed && err instanceof ApiError && (err.status === 400 || err.code === "validation_failed")) {
      ctx.logger?.warn(
        { stream: opts.stream },
        "saved cursor refused; restarting the pass from the first page",
      );
      await pagesFrom(ctx, opts, state, { ...pass, cursor: null });
      return;
    }
    throw err;
  }
}

async function pagesFrom<T>(
  ctx: StreamContext,
  opts: FullRefreshOptions<T>,
  state: FullRefreshState,
  pass: NonNullable<FullRefreshState["pass"]>,
): Promise<void> {
  let buffer: Row[] = [];
  const commits = new CommitPipeline();
  try {
    for await (const page of opts.pages(pass.cursor ?? undefined)) {
      ctx.counters.requests++;
      ctx.signal?.throwIfAborted();
      for (const record of page.results) buffer.push(opts.toRow(record));
      const next = page.pageInfo.endCursor ?? undefined;
      const last = !page.pageInfo.hasNextPage || next === undefined || page.results.length === 0;
      ctx.counters.pages++;
      ctx.counters.rows += page.results.length;
      if (!last) {
        if (buffer.length < ctx.checkpointRows) continue;
        // The rows gathered so far and the cursor after them: a restart resumes exactly here.
        const rows = buffer;
        buffer = [];
        await commits.push(() =>
          ctx.checkpoint(opts.stream, {
            upsert: { table: opts.table, rows },
            state: { stream: opts.stream, value: { ...state, pass: { ...pass, cursor: next } } },
          }),
        );
        continue;
      }
      await commits.drain();
      const done = await ctx.checkpoint(opts.stream, {
        upsert: { table: opts.table, rows: buffer },
        softDelete: { table: opts.table, scope: opts.scope, keepRunIds: pass.runIds },
        state: { stream: opts.stream, value: { lastCompletedAt: ctx.now().toISOString() } },
      });
      ctx.counters.deleted += done.deleted;
      return;
    }
  } finally {
    await commits.settle();
  }
}
