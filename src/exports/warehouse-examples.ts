/**
 * Questions an analyst asks of the warehouse, each with SQL that runs as it
 * stands in DuckDB and in PostgreSQL (a test runs every one on both against
 * a warehouse exported from the emulator). docs/warehouse.md shows them.
 */
export interface ExampleQuery {
  title: string;
  /** What it answers and how to read it. */
  note: string;
  sql: string;
}

export const EXAMPLE_QUERIES: readonly ExampleQuery[] = [
  {
    title: "The funnel by week",
    note: "How many participants reached each status, per study and week. Needs `history: true`.",
    sql: `SELECT study_id, CAST(date_trunc('week', changed_at) AS DATE) AS week, to_status AS status,
  count(DISTINCT participant_id) AS participants
FROM participant_status_changes
WHERE change <> 'removed'
GROUP BY 1, 2, 3
ORDER BY 1, 2, 3`,
  },
  {
    title: "The funnel of the last 30 days, by day",
    note: "The same from the `study_funnel` view, one row per study, status and day.",
    sql: `SELECT study_id, day, status, participants
FROM study_funnel
WHERE day >= current_date - 30
ORDER BY study_id, day, status`,
  },
  {
    title: "Time to screen",
    note: "Hours from the screener sent to the answer, per study, over the participants still in their study.",
    sql: `SELECT study_id, count(*) AS screened,
  round(CAST(avg(extract(epoch FROM screener_response_date - screener_sent_at)) / 3600 AS NUMERIC), 1) AS avg_hours
FROM participants
WHERE _deleted_at IS NULL AND screener_sent_at IS NOT NULL AND screener_response_date >= screener_sent_at
GROUP BY study_id
ORDER BY study_id`,
  },
  {
    title: "Approved then, not approved a week later",
    note: "Who was APPROVED 14 days ago and had another status, or had left, 7 days ago: two as-of queries joined. Put any two times in place of the two expressions (in PostgreSQL a time without zone is read in the session's).",
    sql: `SELECT earlier.participant_id, earlier.study_id, later.status AS status_a_week_later
FROM participants_as_of(current_date - INTERVAL '14 days') AS earlier
LEFT JOIN participants_as_of(current_date - INTERVAL '7 days') AS later
  ON later.participant_id = earlier.participant_id
WHERE earlier.status = 'APPROVED' AND (later.participant_id IS NULL OR later.status <> 'APPROVED')
ORDER BY earlier.participant_id`,
  },
  {
    title: "Every participant's state at a given time",
    note: "Counts per study and status as they stood at the start of yesterday (UTC).",
    sql: `SELECT study_id, status, count(*) AS participants
FROM participants_as_of(current_date - INTERVAL '1 day')
GROUP BY study_id, status
ORDER BY study_id, status`,
  },
  {
    title: "Incentives by status and month",
    note: "Count and amount of incentives per month they were sent and status.",
    sql: `SELECT CAST(date_trunc('month', sent_at) AS DATE) AS month, status, count(*) AS incentives,
  sum(amount_cents) / 100.0 AS amount
FROM incentives
GROUP BY 1, 2
ORDER BY 1, 2`,
  },
  {
    title: "Emails by campaign and status",
    note: "Messages per campaign and delivery status.",
    sql: `SELECT message_campaign_id, status, count(*) AS messages
FROM email_messages
GROUP BY 1, 2
ORDER BY 1, 2`,
  },
  {
    title: "Participants per segment",
    note: "The service exports segments with an id and a name only, no members (spec 2.11), so a segment's participants cannot be counted from the warehouse. What it can segment by is the participants' own state: here per study, approval status and screener state.",
    sql: `SELECT study_id, approval_status, screener_state, count(*) AS participants
FROM participants
WHERE _deleted_at IS NULL
GROUP BY 1, 2, 3
ORDER BY 1, 2, 3`,
  },
  {
    title: "Participants who left their study in the last 30 days",
    note: "A participant gone from its study keeps its row with `_deleted_at`, the time of the export that noticed.",
    sql: `SELECT study_id, participant_id, status AS last_status, _deleted_at AS noticed_gone
FROM participants
WHERE _deleted_at >= current_date - INTERVAL '30 days'
ORDER BY _deleted_at DESC`,
  },
  {
    title: "How fresh each table is",
    note: "The last run that succeeded per table, from the exporter's own bookkeeping.",
    sql: `SELECT resource, max(finished_at) AS last_success, sum(rows) AS rows_written
FROM sync_runs
WHERE status = 'succeeded'
GROUP BY resource
ORDER BY resource`,
  },
];

/** The participants' history of a file warehouse in DuckDB: the newest row per version (docs/warehouse.md). */
export function fileHistoryQuery(dir: string): string {
  return `SELECT * FROM read_ndjson_auto('${dir}/participants_history/*/*/*.ndjson')
QUALIFY row_number() OVER (PARTITION BY participant_id, valid_from ORDER BY valid_to DESC NULLS LAST) = 1`;
}
