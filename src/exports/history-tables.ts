import type { ExportResource } from "../config/export-job.ts";
import type { HistorySpec } from "../sinks/history/index.ts";

/**
 * One row per change of a participant's status: entering the study (`from_status`
 * NULL), moving between statuses, and leaving the service (`to_status` NULL).
 * A version that follows a gap (the participant was gone, then back) is an entry.
 */
const STATUS_CHANGES = `SELECT participant_id, study_id, change, from_status, to_status, changed_at, run_id FROM (
  SELECT participant_id, study_id,
    CASE WHEN continues THEN 'changed' ELSE 'entered' END AS change,
    CASE WHEN continues THEN previous_status END AS from_status,
    status AS to_status, valid_from AS changed_at, opened_by_run AS run_id,
    continues, previous_status
  FROM (
    SELECT participant_id, study_id, status, valid_from, opened_by_run,
      lag(status) OVER w AS previous_status,
      coalesce(lag(valid_to) OVER w = valid_from, false) AS continues
    FROM participants_history
    WINDOW w AS (PARTITION BY participant_id ORDER BY valid_from)
  ) versions
) entries
WHERE NOT continues OR previous_status IS DISTINCT FROM to_status
UNION ALL
SELECT h.participant_id, h.study_id, 'removed', h.status, NULL, h.valid_to, h.closed_by_run
FROM participants_history h
WHERE NOT h.is_current
  AND NOT EXISTS (SELECT 1 FROM participants_history n WHERE n.participant_id = h.participant_id AND n.valid_from = h.valid_to)`;

/** Participants reaching each status, per study and UTC day (DuckDB; PostgreSQL: the session's time zone). */
const STUDY_FUNNEL = `SELECT study_id, to_status AS status, CAST(changed_at AS DATE) AS day, count(DISTINCT participant_id) AS participants
FROM participant_status_changes
WHERE change <> 'removed'
GROUP BY study_id, to_status, CAST(changed_at AS DATE)`;

/**
 * The exported tables that keep history when a job asks for it (`history: true`).
 * Participants track their study state, not their contact details: emails,
 * phones and the note stay in `participants` only, so the history holds no
 * more personal data than a participant id.
 */
export const HISTORY_SPECS: Partial<Record<ExportResource, HistorySpec>> = {
  participants: {
    table: "participants_history",
    key: "participant_id",
    tracked: [
      "person_id",
      "study_id",
      "status",
      "approval_status",
      "screener_state",
      "invited_to_study_at",
      "approved_at",
      "screener_sent_at",
      "test_completed_at",
      "interview_start_time",
      "screener_response_date",
      "added_to_study_at",
    ],
    asOf: "participants_as_of",
    views: [
      {
        name: "participant_status_changes",
        description:
          "One row per change of a participant's status: `change` is entered (from_status NULL), changed, or removed (to_status NULL, gone from the service); `changed_at` is the export's time, `run_id` the run that saw it.",
        sql: STATUS_CHANGES,
        columns: [
          { name: "participant_id", description: "The participant." },
          { name: "study_id", description: "Its study." },
          { name: "change", description: "entered, changed or removed." },
          { name: "from_status", description: "The status before; NULL when entering." },
          { name: "to_status", description: "The status after; NULL when removed." },
          { name: "changed_at", description: "The time of the export that saw the change (UTC)." },
          { name: "run_id", description: "The export run that saw it (sync_runs.run_id)." },
        ],
      },
      {
        name: "study_funnel",
        description:
          "Participants who reached each status, per study and day of `changed_at` (entries and changes; removals left out).",
        sql: STUDY_FUNNEL,
        columns: [
          { name: "study_id", description: "The study." },
          { name: "status", description: "The status reached." },
          { name: "day", description: "The day of `changed_at`." },
          { name: "participants", description: "Participants who reached the status that day." },
        ],
      },
    ],
  },
  person_properties: {
    table: "person_properties_history",
    key: "property_id",
    tracked: [
      "name",
      "property_type",
      "property_options",
      "is_unique",
      "is_phi",
      "is_pii",
      "description",
      "property_group_id",
    ],
    asOf: "person_properties_as_of",
  },
};
