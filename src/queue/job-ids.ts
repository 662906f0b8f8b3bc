import { hashFile, hashValue } from "../imports/index.ts";

/**
 * BullMQ drops a job whose id exists already, so the same file under the same
 * definition — dropped twice under two names, or enqueued again while the
 * first is queued or kept — is imported once. Ids hold no ':' (BullMQ's key
 * separator) and are never all digits (BullMQ's own ids).
 */
export async function importJobId(
  file: string,
  definition: unknown,
  service: string,
  options: { dryRun?: boolean; force?: boolean; full?: boolean } = {},
): Promise<{ jobId: string; fileHash: string }> {
  const fileHash = await hashFile(file);
  const target = hashValue({ definition, service });
  // A forced or full run is asked for again on purpose: a new id, never the earlier job's.
  const again = options.force ? `-force${Date.now()}` : options.full ? `-full${Date.now()}` : "";
  const mode = `${options.dryRun ? "-dry" : ""}${again}`;
  return { jobId: `import-${fileHash.slice(0, 24)}-${target.slice(0, 16)}${mode}`, fileHash };
}

/** Exports asked for by hand: one id per request, named after the job for people reading the dashboard. */
export function exportJobId(job: string | undefined, at = new Date()): string {
  const stamp = at.toISOString().replace(/[-:.TZ]/g, "");
  return `export-${job ?? "adhoc"}-${stamp}-${Math.random().toString(36).slice(2, 8)}`;
}
