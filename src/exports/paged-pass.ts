import { ApiError, type Page } from "../api/index.ts";
import type { Row, SoftDelete } from "../sinks/index.ts";
import { aheadByOne } from "./ahead-by-one.ts";
import { CommitPipeline } from "./commit-pipeline.ts";
import type { StreamContext } from "./stream-context.ts";

/**
 * Reads of a shrinking collection before the last one; the last ends the pass
 * without what only a complete read may do (soft deletes, moving a mark).
 */
export const MAX_PASS_ATTEMPTS = 3;

/** Where a pass stands: the next page's cursor and the total its first page gave. */
export interface PassPosition {
  cursor: string | null;
  total: number | null;
}

/** What ends a pass: its state, and the soft deletes a complete read allows. */
export interface PassEnd {
  state: unknown;
  softDelete?: SoftDelete;
}

/**
 * What makes one stream's pass its own. The engine pages, commits, watches
 * the total and retries; the policy says what the state holds.
 */
export interface CursorPolicy<T, P extends PassPosition> {
  stream: string;
  table: string;
  /** What a pass reads, as the logs name it: "collection", "window". */
  noun: string;
  /** The pages from a cursor (the first page without one). */
  pages(cursor: string | undefined): AsyncIterable<Page<T>>;
  toRow(record: T): Row;
  /** The pass after a page's records (a mark such as the newest sentAt); cursor and total are the engine's. */
  afterRecords?(pass: P, records: readonly T[]): P;
  /** The stream's state while `pass` is under way: saved with every checkpoint before the last. */
  underWay(pass: P): unknown;
  /** The pass that reads again after a read saw the total fall; saved, so a killed run resumes it. */
  reread(pass: P): P;
  /** The last commit of the pass; `complete` is false when the last read still saw the total fall. */
  end(pass: P, complete: boolean): PassEnd;
  /** Logged when the last read still shrank: what the stream leaves undone. */
  keptShrinking: string;
}

/**
 * The service refused a cursor: it answered 400, with either body. The spec
 * says nothing of stale cursors; a 400 is the only answer it documents for a
 * request it will not take, JSON for schema validation and text for a domain
 * rule (spec 7), and a cursor may fail either. A request the client refused
 * to send (no status) never reached the service, so no cursor was refused.
 */
export function cursorRefused(err: unknown): boolean {
  return err instanceof ApiError && err.status === 400;
}

/** The end of paging: no next page, no cursor to it, or an empty page (docs/spec-decisions.md, 2.12). */
export function nextCursor<T>(page: Page<T>): string | null {
  const next = page.pageInfo.endCursor ?? null;
  return !page.pageInfo.hasNextPage || next === null || page.results.length === 0 ? null : next;
}

/**
 * Whether a page shows the collection smaller than the pass's first page did.
 * Cursors may be offsets, so the pages after a shrink may have skipped records.
 */
export function shrankBelow(pass: PassPosition, page: Page<unknown>): boolean {
  return pass.total !== null && page.total < pass.total;
}

/**
 * Runs a pass to its end from `start`: reads it again from the top after a
 * read that saw the collection shrink (at most MAX_PASS_ATTEMPTS reads), and
 * from the first page when the service refuses the cursor the read started from.
 */
export async function runPass<T, P extends PassPosition>(
  ctx: StreamContext,
  policy: CursorPolicy<T, P>,
  start: P,
): Promise<void> {
  let pass = start;
  for (let attempt = 1; ; attempt++) {
    let outcome: ReadOutcome<P>;
    try {
      outcome = await readPass(ctx, policy, pass, attempt >= MAX_PASS_ATTEMPTS);
    } catch (err) {
      // A cursor saved by an earlier run may have expired: the same pass starts from the top.
      if (pass.cursor === null || !cursorRefused(err)) throw err;
      ctx.logger?.warn(
        { stream: policy.stream },
        `saved cursor refused; reading the ${policy.noun} again from the first page`,
      );
      pass = { ...pass, cursor: null, total: null };
      continue;
    }
    if (outcome.next === undefined) return;
    ctx.logger?.warn(
      { stream: policy.stream, attempt },
      `the ${policy.noun} shrank during the pass; reading it again`,
    );
    pass = outcome.next;
  }
}

/** `next`: the read saw the collection shrink, and this pass reads it again. */
interface ReadOutcome<P> {
  next?: P;
}

/**
 * One read of the pass from its cursor. The next page is fetched while this
 * one is converted and its commit runs; pages are gathered into checkpoints
 * of `ctx.checkpointRows` rows, each with the cursor after them.
 */
export async function readPass<T, P extends PassPosition>(
  ctx: StreamContext,
  policy: CursorPolicy<T, P>,
  start: P,
  lastAttempt: boolean,
): Promise<ReadOutcome<P>> {
  let pass = start;
  let shrank = false;
  let rows: Row[] = [];
  let ending = false;
  let pagesRead = 0;
  const commits = new CommitPipeline();
  // While the budget holds the next page back, the rows so far and the cursor after them are
  // committed: that wait is idle time, and the pass's last window then ends with only its own rows.
  // Only with no commit in flight (else once it is done, if no page came meanwhile), so the rows
  // a killed run loses stay within one commit in flight and one being gathered.
  const unlisten = ctx.whileWaiting(() => {
    const pagesAtWait = pagesRead;
    const commitGathered = (): void => {
      if (ending || rows.length === 0 || pagesRead !== pagesAtWait) return;
      if (commits.busy) {
        void commits.idle().then(commitGathered);
        return;
      }
      const batch = rows;
      rows = [];
      const state = policy.underWay(pass);
      // Not awaited here: the loop's next push, or its drain, meets a failed commit.
      commits.push(() => checkpoint(ctx, policy, batch, { state })).catch(() => undefined);
    };
    commitGathered();
  });
  try {
    for await (const page of aheadByOne(policy.pages(pass.cursor ?? undefined), (err) => ctx.failing(err))) {
      ctx.counters.requests++;
      pagesRead++;
      ctx.answered();
      ctx.signal?.throwIfAborted();
      if (shrankBelow(pass, page)) shrank = true;
      if (pass.total === null) pass = { ...pass, total: page.total };
      for (const record of page.results) rows.push(policy.toRow(record));
      if (policy.afterRecords) pass = policy.afterRecords(pass, page.results);
      ctx.counters.pages++;
      ctx.counters.rows += page.results.length;
      const next = nextCursor(page);
      if (next !== null) {
        pass = { ...pass, cursor: next };
        if (rows.length < ctx.checkpointRows) continue;
        // The rows gathered so far and the cursor after them: a restart resumes exactly here.
        const batch = rows;
        rows = [];
        const state = policy.underWay(pass);
        await commits.push(() => checkpoint(ctx, policy, batch, { state }));
        continue;
      }
      ending = true;
      await commits.drain();
      return await endRead(ctx, policy, { ...pass, cursor: null }, rows, shrank && !lastAttempt, shrank);
    }
    return {};
  } finally {
    ending = true;
    unlisten();
    await commits.settle();
  }
}

/**
 * The last page's commit: the pass ends, or — after a shrink, reads left —
 * keeps what was read and hands a fresh read to the next attempt.
 */
async function endRead<T, P extends PassPosition>(
  ctx: StreamContext,
  policy: CursorPolicy<T, P>,
  pass: P,
  rows: readonly Row[],
  readAgain: boolean,
  shrank: boolean,
): Promise<ReadOutcome<P>> {
  if (readAgain) {
    const next = policy.reread(pass);
    await checkpoint(ctx, policy, rows, { state: policy.underWay(next) });
    return { next };
  }
  if (shrank) ctx.logger?.warn({ stream: policy.stream }, policy.keptShrinking);
  const done = await checkpoint(ctx, policy, rows, policy.end(pass, !shrank));
  ctx.counters.deleted += done.deleted;
  return {};
}

function checkpoint<T, P extends PassPosition>(
  ctx: StreamContext,
  policy: CursorPolicy<T, P>,
  rows: readonly Row[],
  end: PassEnd,
) {
  return ctx.checkpoint(policy.stream, {
    upsert: { table: policy.table, rows },
    ...(end.softDelete ? { softDelete: end.softDelete } : {}),
    state: { stream: policy.stream, value: end.state },
  });
}
