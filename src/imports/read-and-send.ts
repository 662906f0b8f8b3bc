import type { ImportRun } from "./import-run.ts";
import { readPhase } from "./run-read.ts";
import { sendPhase } from "./run-send.ts";
import type { RunWarnings } from "./run-warnings.ts";

/**
 * Reading (and mapping and merging, as rows come) and sending run at once:
 * the first failure of either stops the other, keeps the change state's
 * stamps so far, closes the rejects file for the report to point at, and
 * is thrown.
 */
export async function readMergeAndSend(r: ImportRun): Promise<RunWarnings> {
  const readStop = new AbortController();
  let failure: { error: unknown } | undefined;
  const sending = sendPhase(r).catch((error: unknown) => {
    failure ??= { error };
    r.gate.firstAnswer.reject(error);
    r.merge.stop(error);
    readStop.abort(error);
  });
  const reading = readPhase(r, readStop.signal).catch((error: unknown) => {
    failure ??= { error };
    r.merge.stop(error);
  });
  const [warnings] = await Promise.all([reading, sending]);
  readStop.abort();
  if (failure === undefined && warnings !== undefined) return warnings;
  // Another run of this scope may finish before the retry and make the state comparable:
  // the people this one got accepted must be in it then, or the retry sends them again.
  await r.gate.sent?.keep().catch(() => {});
  // The rows rejected so far are the report's to point at: a file refused as mostly rejected is mended from them.
  r.counts.files.rejectsFile = await r.files.rejects.close().catch(() => null);
  throw failure === undefined ? new Error("the read phase ended without its warnings") : failure.error;
}
