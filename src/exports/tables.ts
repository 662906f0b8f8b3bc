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
  participants: deriveTable("participants", Participant, ["participantId"]),
  email_messages: deriveTable("email_messages", EmailMessage, ["id"]),
  incentives: deriveTable("incentives", Incentive, ["incentiveId"]),
  custom_incentives: deriveTable("custom_incentives", CustomIncentive, ["customIncentiveId"]),
  segments: deriveTable("segments", Segment, ["segmentId"]),
  person_properties: deriveTable("person_properties", PersonProperty, ["propertyId"]),
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
