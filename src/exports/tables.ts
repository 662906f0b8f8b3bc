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

/** Every exported table, for sink.prepare(). */
export function exportTableSchemas(): TableSchema[] {
  return Object.values(EXPORT_TABLES).map((t) => t.table);
}
