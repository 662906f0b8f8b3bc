/**
 * How a run is named to people, from its job's data: the server's lists and
 * the page both call it. The data is the job's as enqueued, read without its
 * schema (src/queue/job-data.ts needs Node: it resolves warehouse paths), so
 * each key is checked here.
 */

type Loose = { job?: unknown; definition?: { name?: unknown } | null; kind?: unknown; dryRun?: unknown };

const loose = (data: unknown): Loose => (typeof data === "object" && data !== null ? (data as Loose) : {});

/** Its job definition's name, else the name its report gives, else its kind. */
export function runName(data: unknown, report?: unknown): string {
  const d = loose(data);
  if (typeof d.job === "string") return d.job;
  if (typeof d.definition?.name === "string") return d.definition.name;
  const job = (loose(report) as { job?: unknown }).job;
  if (typeof job === "string") return job;
  return typeof d.kind === "string" ? d.kind : "job";
}

/** Whether the run was asked to send nothing. */
export function isDryRun(data: unknown): boolean {
  return loose(data).dryRun === true;
}
