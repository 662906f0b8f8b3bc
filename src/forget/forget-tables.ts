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
  /** Each column that can hold the person, and what it holds. */
  columns: Readonly<Record<string, ForgetColumnHolds>>;
  /** Columns of a matched row that name the person elsewhere: their values are forgotten too. */
  yields?: { personId?: string; participantId?: string };
}

export const FORGET_TABLES: ForgetTable[] = [
  {
    table: "participants",
    columns: {
      email: "email",
      additional_emails: "emails",
      phone: "phone",
      additional_phones: "phones",
      person_id: "personId",
      _raw: "json",
    },
    yields: { personId: "person_id", participantId: "participant_id" },
  },
  {
    table: "email_messages",
    columns: {
      recipient_email: "email",
      recipient_id: "personId",
      participant_id: "participantId",
      _raw: "json",
    },
  },
  {
    // Kept with `history: true` (issue 33): the person's ids, never their contact details.
    table: "participants_history",
    columns: { person_id: "personId", participant_id: "participantId" },
  },
  {
    table: "incentives",
    columns: {
      recipient_email: "email",
      person_id: "personId",
      participant_id: "participantId",
      _raw: "json",
    },
  },
  {
    // The sync log keys people by personDigest of their identifier (src/synclog/table.ts).
    table: "sync_log",
    columns: { person_digest: "digest" },
  },
];
