import type { StreamContext } from "../stream-context.ts";
import { EXPORT_TABLES } from "../tables.ts";
import { runFullRefresh } from "./full-refresh.ts";

/** Participants of each configured study; a participant gone from its study gets `_deleted_at`. */
export async function exportParticipants(ctx: StreamContext): Promise<void> {
  const t = EXPORT_TABLES.participants;
  for (const studyId of ctx.definition.studies) {
    await runFullRefresh(ctx, {
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
    });
  }
}

/** Every segment of the workspace. */
export async function exportSegments(ctx: StreamContext): Promise<void> {
  const t = EXPORT_TABLES.segments;
  await runFullRefresh(ctx, {
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
  });
}

/** Person properties of each configured property group. */
export async function exportPersonProperties(ctx: StreamContext): Promise<void> {
  const t = EXPORT_TABLES.person_properties;
  for (const groupId of ctx.definition.propertyGroups) {
    await runFullRefresh(ctx, {
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
    });
  }
}
