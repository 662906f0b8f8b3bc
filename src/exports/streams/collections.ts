import { RecruitSyncError } from "../../errors/index.ts";
import type { StreamContext } from "../stream-context.ts";
import { EXPORT_TABLES } from "../tables.ts";
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

/** Participants of each configured study; a participant gone from its study gets `_deleted_at`. */
export async function exportParticipants(ctx: StreamContext): Promise<void> {
  const t = EXPORT_TABLES.participants;
  await eachOf(ctx, "study", ctx.definition.studies, (studyId) =>
    runFullRefresh(ctx, {
      stream: `participants:study=${studyId}`,
      table: t.table.name,
      scope: { study_id: studyId },
      pages: (startCursor) =>
        ctx.client.participantPages(studyId, {
          pageSize: ctx.definition.pageSize,
          ...(startCursor === undefined ? {} : { startCursor }),
          signal: ctx.signal,
        }),
      toRow: (p) => t.toRow(p, { study_id: studyId }),
    }),
  );
}

/** Every segment of the workspace. */
export async function exportSegments(ctx: StreamContext): Promise<void> {
  const t = EXPORT_TABLES.segments;
  await ctx.inSlot(() =>
    runFullRefresh(ctx, {
      stream: "segments",
      table: t.table.name,
      scope: {},
      pages: (startCursor) =>
        ctx.client.segmentPages({
          pageSize: ctx.definition.pageSize,
          ...(startCursor === undefined ? {} : { startCursor }),
          signal: ctx.signal,
        }),
      toRow: (s) => t.toRow(s),
    }),
  );
}

/** Person properties of each configured property group. */
export async function exportPersonProperties(ctx: StreamContext): Promise<void> {
  const t = EXPORT_TABLES.person_properties;
  await eachOf(ctx, "property group", ctx.definition.propertyGroups, (groupId) =>
    runFullRefresh(ctx, {
      stream: `person_properties:group=${groupId}`,
      table: t.table.name,
      scope: { property_group_id: groupId },
      pages: (startCursor) =>
        ctx.client.propertyGroupPages(groupId, {
          pageSize: ctx.definition.pageSize,
          ...(startCursor === undefined ? {} : { startCursor }),
          signal: ctx.signal,
        }),
      toRow: (p) => t.toRow(p, { property_group_id: groupId }),
    }),
  );
}
