/**
 * Where the warehouse holds a person, as one declarative list that `forget`
 * reads for DuckDB, PostgreSQL and the file warehouse alike. A table added
 * later (history tables, the sync log) adds its entry here and is scrubbed
 * with the rest; a table the warehouse does not have is skipped.
 *
 * A column `holds`:
 * - `email` / `phone`: the value itself (emails compared in lower case);
 * - `emails` / `phones`: a list of them (text_array);
 * - `identifier`: an email or a phone, whichever the row was keyed by;
 * - `personId` / `participantId`: the service's ids of the person, gathered
 *   first from the rows that `yields` them (a row matched by email or phone);
 * - `json`: a JSON text holding any of the above as a whole string value
 *   (the `_raw` column), so a value no other column names is still found;
 * - `digest`: personDigest of the identifier (src/imports/unverified-people.ts),
 *   for a table that keys people by the digest rather than the value.
 */
export type ForgetColumnHolds =
  | "email"
  | "phone"
  | "emails"
  | "phones"
  | "identifier"
  | "personId"
  | "participantId"
  | "json"
  | "digest";

export interface ForgetTable {
  table: string;
  columns: readonly { column: string; holds: ForgetColumnHolds }[];
  /** Columns of a matched row that name the person elsewhere: their values are forgotten too. */
  yields?: { personId?: string; participantId?: string };
}

export const FORGET_TABLES: ForgetTable[] = [
  {
    table: "participants",
    columns: [
      { column: "email", holds: "email" },
      { column: "additional_emails", holds: "emails" },
      { column: "phone", holds: "phone" },
      { column: "additional_phones", holds: "phones" },
      { column: "person_id", holds: "personId" },
      { column: "_raw", holds: "json" },
    ],
    yields: { personId: "person_id", participantId: "participant_id" },
  },
  {
    table: "email_messages",
    columns: [
      { column: "recipient_email", holds: "email" },
      { column: "recipient_id", holds: "personId" },
      { column: "participant_id", holds: "participantId" },
      { column: "_raw", holds: "json" },
    ],
  },
  {
    // Kept with `history: true` (issue 33): the person's ids, never their contact details.
    table: "participants_history",
    columns: [
      { column: "person_id", holds: "personId" },
      { column: "participant_id", holds: "participantId" },
    ],
  },
  {
    table: "incentives",
    columns: [
      { column: "recipient_email", holds: "email" },
      { column: "person_id", holds: "personId" },
      { column: "participant_id", holds: "participantId" },
      { column: "_raw", holds: "json" },
    ],
  },
  {
    // The sync log keys people by personDigest of their identifier (src/synclog/table.ts).
    table: "sync_log",
    columns: [{ column: "person_digest", holds: "digest" }],
  },
];
