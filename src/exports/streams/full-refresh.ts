import { z } from "zod";
import type { Page } from "../../api/index.ts";
import type { Row } from "../../sinks/index.ts";
import { type CursorPolicy, runPass } from "../paged-pass.ts";
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
  const pass: Pass = state.pass ?? freshPass(ctx);
  if (!pass.runIds.includes(ctx.runId)) pass.runIds.push(ctx.runId);
  await runPass(ctx, fullRefreshPolicy(ctx, opts, state), pass);
}

/** The cursor comes from the page; a complete pass soft-deletes what none of its runs wrote. */
function fullRefreshPolicy<T>(
  ctx: StreamContext,
  opts: FullRefreshOptions<T>,
  state: FullRefreshState,
): CursorPolicy<T, Pass> {
  return {
    stream: opts.stream,
    table: opts.table,
    noun: "collection",
    pages: opts.pages,
    toRow: opts.toRow,
    underWay: (pass) => ({ ...state, pass }),
    // The collection shrank while we paged: read it again from the top (every
    // write is an upsert) rather than soft-delete what we may have skipped.
    reread: () => freshPass(ctx),
    end: (pass, complete) => ({
      state: { lastCompletedAt: ctx.now().toISOString(), lastCompletedBy: ctx.runId },
      ...(complete ? { softDelete: { table: opts.table, scope: opts.scope, keepRunIds: pass.runIds } } : {}),
    }),
    keptShrinking: "the collection kept shrinking; no soft deletes this run",
  };
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
