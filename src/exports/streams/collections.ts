import type { Page, PagingOptions } from "../../api/index.ts";
import { RecruitSyncError } from "../../errors/index.ts";
import { pagingFrom, type StreamContext } from "../stream-context.ts";
import { EXPORT_TABLES } from "../tables.ts";
import type { DerivedTable } from "../zod-columns.ts";
import { runFullRefresh } from "./full-refresh.ts";

/**
 * Runs `work` for every item, each a stream of its own in a slot of the run,
 * so that several page at once; one that fails (a study deleted, a group the
 * token may not read) does not stop the others. The resource then fails at
 * the end, naming every item that failed, in the definition's order. An
 * abort, or a failure that stops the run, ends it with the run's reason.
 */
async function eachOf(
  ctx: StreamContext,
  kind: string,
  items: readonly string[],
  work: (item: string) => Promise<void>,
): Promise<void> {
  const settled = await Promise.allSettled(items.map((item) => ctx.inSlot(() => work(item))));
  ctx.signal?.throwIfAborted();
  const failures: string[] = [];
  let first: unknown;
  settled.forEach((outcome, i) => {
    if (outcome.status === "fulfilled") return;
    const err: unknown = outcome.reason;
    first ??= err;
    const why = err instanceof Error ? err.message : String(err);
    failures.push(`${kind} ${items[i]}: ${why}`);
    ctx.logger?.warn(
      { kind, item: items[i], code: (err as { code?: string }).code },
      "export of one item failed; the others went on",
    );
  });
  if (failures.length === 1) throw first;
  if (failures.length > 1) {
    throw new RecruitSyncError(
      "export_items_failed",
      `${failures.length} of ${items.length} failed: ${failures.join("; ")}`,
      {
        cause: first,
        retryable: (first as { retryable?: boolean }).retryable === true,
      },
    );
  }
}

/** Each item's collection, refreshed in full: a study's participants, a property group's properties. */
interface ItemCollections<T> {
  /** The item as a failure names it: "study", "property group". */
  kind: string;
  /** The item in its stream's key: `<table>:<keyName>=<item>`. */
  keyName: string;
  /** The column holding the item in every row: a full refresh soft-deletes only within its item. */
  column: string;
  table: DerivedTable;
  items: readonly string[];
  pages: (item: string, paging: PagingOptions) => AsyncGenerator<Page<T>>;
}

/** One full-refresh stream per item, the rows of each marked with their item. */
function refreshEach<T extends Readonly<Record<string, unknown>>>(
  ctx: StreamContext,
  of: ItemCollections<T>,
): Promise<void> {
  const name = of.table.table.name;
  return eachOf(ctx, of.kind, of.items, (item) =>
    runFullRefresh(ctx, {
      stream: `${name}:${of.keyName}=${item}`,
      table: name,
      scope: { [of.column]: item },
      pages: (startCursor) => of.pages(item, pagingFrom(ctx, startCursor)),
      toRow: (record) => of.table.toRow(record, { [of.column]: item }),
    }),
  );
}

/** Participants of each configured study; a participant gone from its study gets `_deleted_at`. */
export function exportParticipants(ctx: StreamContext): Promise<void> {
  return refreshEach(ctx, {
    kind: "study",
    keyName: "study",
    column: "study_id",
    table: EXPORT_TABLES.participants,
    items: ctx.definition.studies,
    pages: (studyId, paging) => ctx.client.participantPages(studyId, paging),
  });
}

/** Every segment of the workspace. */
export async function exportSegments(ctx: StreamContext): Promise<void> {
  const t = EXPORT_TABLES.segments;
  await ctx.inSlot(() =>
    runFullRefresh(ctx, {
      stream: "segments",
      table: t.table.name,
      scope: {},
      pages: (startCursor) => ctx.client.segmentPages(pagingFrom(ctx, startCursor)),
      toRow: (s) => t.toRow(s),
    }),
  );
}

/** Person properties of each configured property group. */
export function exportPersonProperties(ctx: StreamContext): Promise<void> {
  return refreshEach(ctx, {
    kind: "property group",
    keyName: "group",
    column: "property_group_id",
    table: EXPORT_TABLES.person_properties,
    items: ctx.definition.propertyGroups,
    pages: (groupId, paging) => ctx.client.propertyGroupPages(groupId, paging),
  });
}
