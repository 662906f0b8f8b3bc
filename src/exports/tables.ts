import {
  CustomIncentive,
  EmailMessage,
  Incentive,
  Participant,
  PersonProperty,
  Segment,
} from "../api/index.ts";
import type { ExportResource } from "../config/export-job.ts";
import type { TableSchema } from "../sinks/index.ts";
import { HISTORY_SPECS } from "./history-tables.ts";
import { type DerivedTable, deriveTable } from "./zod-columns.ts";

/** Each exported resource's table, derived from the contract's schemas. */
export const EXPORT_TABLES: Readonly<Record<ExportResource, DerivedTable>> = {
  participants: deriveTable("participants", Participant, ["participantId"], {
    description:
      "Participants of the studies the job names, as the last export saw them. A participant gone from its study keeps its row with `_deleted_at` set.",
    spec: "2.6 Participant",
  }),
  email_messages: deriveTable("email_messages", EmailMessage, ["id"], {
    description:
      "Email messages sent in the window the job reads (emails.backfillDays, then a lookback behind the newest sentAt loaded). Never marked deleted: the search shows no deletions.",
    spec: "2.8 Email message",
  }),
  incentives: deriveTable("incentives", Incentive, ["incentiveId"], {
    description:
      "Incentives the job lists, and those already in the warehouse that had not reached a final status; re-read until final. An id the service answers 404 for is skipped: its row stays as last read, `_deleted_at` stays NULL.",
    spec: "2.9 Incentive",
  }),
  custom_incentives: deriveTable("custom_incentives", CustomIncentive, ["customIncentiveId"], {
    description: "Custom incentive definitions the live incentives refer to, re-read every run.",
    spec: "2.10 Custom incentive",
  }),
  segments: deriveTable("segments", Segment, ["segmentId"], {
    description:
      "Segments of the workspace, refreshed in full each run (one gone gets `_deleted_at`). The service gives only their ids and names, not their members (spec 2.11).",
    spec: "2.11 Segment",
  }),
  person_properties: deriveTable("person_properties", PersonProperty, ["propertyId"], {
    description:
      "Person property definitions (not people's values) of the property groups the job names. A property gone from its group gets `_deleted_at`.",
    spec: "2.7 Person property",
  }),
};

/**
 * Every exported table, for sink.prepare(); with `history`, participants and
 * person properties carry their history tables (history-tables.ts).
 */
export function exportTableSchemas(options: { history?: boolean } = {}): TableSchema[] {
  return (Object.entries(EXPORT_TABLES) as [ExportResource, DerivedTable][]).map(([resource, t]) => {
    const history = options.history ? HISTORY_SPECS[resource] : undefined;
    return history ? { ...t.table, history } : t.table;
  });
}
