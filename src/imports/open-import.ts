import path from "node:path";
import { skippedReport } from "./build-report.ts";
import { hashFile, hashValue } from "./file-hash.ts";
import { ImportCounts, type Progress, startProgress } from "./import-counts.ts";
import type { RunImportOptions } from "./import-options.ts";
import type { ImportLedger } from "./ledger.ts";
import { openImportLedger } from "./ledger.ts";
import { type CsvSource, openCsv } from "./read-records.ts";
import type { ImportReport } from "./report.ts";

/** A run opened: its file, its ledger, its counts and its progress. */
export interface OpenedImport {
  job: string;
  csv: CsvSource;
  ledger: ImportLedger | undefined;
  counts: ImportCounts;
  progress: Progress;
}

/**
 * The open phase: the file's encoding and delimiter settled, its bytes
 * hashed, and the ledger opened; a file the ledger says this definition has
 * imported ends here, with the earlier run's report as skipped.
 */
export async function openImport(
  options: RunImportOptions,
): Promise<OpenedImport | { skipped: ImportReport }> {
  const started = Date.now();
  const def = options.definition;
  const dryRun = options.dryRun === true;
  const job = options.job ?? def.name ?? path.basename(options.file).replace(/\.[^.]*$/, "");
  const csv = await openCsv(options.file, def.source);
  const definitionHash = hashValue(def);
  const progress = startProgress(csv.size, options.onProgress);
  options.logger?.info({ job, bytes: csv.size, encoding: csv.encoding, dryRun }, "import started");
  progress.tell();
  const onHashed = options.onProgress && ((bytes: number) => progress.tell("hash", bytes));
  const fileHash = options.fileHash ?? (await hashFile(options.file, options.signal, onHashed));
  const hashed = Date.now();
  const full = options.changes?.full === true;
  const opened =
    options.ledger && !dryRun
      ? await openImportLedger({
          ...options.ledger,
          fileHash,
          definitionHash,
          service: options.client?.baseUrl ?? null,
          sendsChangedOnly: options.changes !== undefined && !full,
          force: options.force === true,
          full,
        })
      : undefined;
  if (opened?.done) {
    return { skipped: skippedReport(opened.done, { job, file: options.file, started, now: Date.now() }) };
  }
  const identity = {
    job,
    file: options.file,
    dryRun,
    unmappedAs: def.unmapped,
    encoding: csv.encoding,
    delimiter: csv.delimiter === "\t" ? "tab" : csv.delimiter,
    fileHash,
    definitionHash,
  };
  const notes = csv.encodingNote ? [csv.encodingNote] : [];
  const counts = new ImportCounts(identity, { started, hashed }, notes, def.invalidOptionalValues ?? "drop");
  progress.counts = counts;
  progress.tell("read", 0);
  return { job, csv, ledger: opened?.ledger, counts, progress };
}
