import type { JobProgress } from "./job-progress.ts";

/**
 * A finished job's report, wherever the job ended: its return value when it
 * completed, else the report its failure kept in the job's progress
 * (job-outcome.ts records it); undefined when there is none. The one reading
 * for `--wait`, the demo and the ops views.
 */
export function jobReport(end: {
  state: string;
  returnvalue: unknown;
  progress: JobProgress | undefined;
}): unknown {
  return end.state === "completed" ? end.returnvalue : end.progress?.failure?.report;
}
