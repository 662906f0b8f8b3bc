import { z } from "zod";
import { ApiError, type Page } from "../../api/index.ts";
import type { Row } from "../../sinks/index.ts";
import { aheadByOne } from "../ahead-by-one.ts";
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
      /** The collection's total on the pass's first page. */
      total: z.number().int().nullable().default(null),
    })
    .optional(),
  lastCompletedAt: z.string().optional(),
  /** The run that ended the last pass: a run taking over its unfinished export keeps that pass. */
  lastCompletedBy: z.string().optional(),
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
  if (finishedByThisExport(ctx, state)) {
    ctx.counters.passesKept++;
    ctx.logger?.info(
      { stream: opts.stream, finishedBy: state.lastCompletedBy },
      "pass already finished by an interrupted run of this export; not read again",
    );
    return;
  }
  let pass: Pass = state.pass ?? freshPass(ctx);
  if (!pass.runIds.includes(ctx.runId)) pass.runIds.push(ctx.runId);
  for (let attempt = 1; ; attempt++) {
    const resumed = pass.cursor !== null;
    let outcome: PassOutcome;
    try {
      outcome = await pagesFrom(ctx, opts, state, pass, attempt >= MAX_PASS_ATTEMPTS);
    } catch (err) {
      // A cursor saved by an earlier run may have expired: start the same pass from the top.
      if (resumed && err instanceof ApiError && (err.status === 400 || err.code === "validation_failed")) {
        ctx.logger?.warn(
          { stream: opts.stream },
          "saved cursor refused; restarting the pass from the first page",
        );
        pass = { ...pass, cursor: null, total: null };
        continue;
      }
      throw err;
    }
    if (outcome === "done") return;
    // The collection shrank while we paged. Cursors may be offsets, so the
    // pages after the shrink may have skipped live records: read it again from
    // the top (every write is an upsert) rather than soft-delete what we missed.
    ctx.logger?.warn(
      { stream: opts.stream, attempt },
      "the collection shrank during the pass; reading it again",
    );
    pass = freshPass(ctx);
  }
}

type Pass = NonNullable<FullRefreshState["pass"]>;

/**
 * A run that takes over an unfinished export (the job killed, aborted or
 * failed, then run again) goes on from where it stopped: a pass one of its
 * earlier runs finished, recently enough, is kept as it is, with its soft
 * deletes, instead of being read page by page again.
 */
function finishedByThisExport(ctx: StreamContext, state: FullRefreshState): boolean {
  if (state.pass !== undefined || state.lastCompletedBy === undefined) return false;
  if (!ctx.continues.includes(state.lastCompletedBy)) return false;
  const finishedAt = Date.parse(state.lastCompletedAt ?? "");
  return Number.isFinite(finishedAt) && ctx.now().getTime() - finishedAt < ctx.resumeWithinMs;
}

/**
 * A pass read only by this run. After a shrink the earlier runs' rows no
 * longer count as seen: what the new read does not meet has left.
 */
function freshPass(ctx: StreamContext): Pass {
  return { startedAt: ctx.now().toISOString(), runIds: [ctx.runId], cursor: null, total: null };
}
/** "shrank": the pass saw the total fall and ended without soft-deleting. */
type PassOutcome = "done" | "shrank";
/** Reads of a shrinking collection before the last one ends without soft deletes. */
const MAX_PASS_ATTEMPTS = 3;

async function pagesFrom<T>(
  ctx: StreamContext,
  opts: FullRefreshOptions<T>,
  state: FullRefreshState,
  startPass: Pass,
  lastAttempt: boolean,
): Promise<PassOutcome> {
  let pass = startPass;
  let shrank = false;
  let buffer: Row[] = [];
  const commits = new CommitPipeline();
  try {
    // The next page is fetched while this one is converted and its commit runs.
    for await (const page of aheadByOne(opts.pages(pass.cursor ?? undefined))) {
      ctx.counters.requests++;
      ctx.signal?.throwIfAborted();
      if (pass.total === null) pass = { ...pass, total: page.total };
      else if (page.total < pass.total) shrank = true;
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
      if (shrank && !lastAttempt) {
        // Keep what was read; the next attempt starts a fresh read of the same pass.
        await ctx.checkpoint(opts.stream, {
          upsert: { table: opts.table, rows: buffer },
          state: { stream: opts.stream, value: { ...state, pass: freshPass(ctx) } },
        });
        return "shrank";
      }
      if (shrank) {
        ctx.logger?.warn({ stream: opts.stream }, "the collection kept shrinking; no soft deletes this run");
      }
      const done = await ctx.checkpoint(opts.stream, {
        upsert: { table: opts.table, rows: buffer },
        ...(shrank ? {} : { softDelete: { table: opts.table, scope: opts.scope, keepRunIds: pass.runIds } }),
        state: {
          stream: opts.stream,
          value: { lastCompletedAt: ctx.now().toISOString(), lastCompletedBy: ctx.runId },
        },
      });
      ctx.counters.deleted += done.deleted;
      return "done";
    }
    return "done";
  } finally {
    await commits.settle();
  }
}
