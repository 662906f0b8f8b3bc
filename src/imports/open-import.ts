import path from "node:path";
import { skippedReport } from "./build-report.ts";
import { type CsvFormat, settleCsvFormat } from "./csv-format.ts";
import { hashFile, hashValue } from "./file-hash.ts";
import { ImportCounts } from "./import-counts.ts";
import type { RunImportOptions } from "./import-options.ts";
import { type Progress, startProgress } from "./import-progress.ts";
import type { ImportLedger } from "./ledger.ts";
import { openImportLedger } from "./ledger.ts";
import type { ImportReport } from "./report.ts";

/** A run opened: its file, its ledger, its counts and its progress. */
export interface OpenedImport {
  job: string;
  format: CsvFormat;
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
  const format = await settleCsvFormat(options.file, def.source);
  const progress = startProgress(format.size, options.onProgress);
  options.logger?.info({ job, bytes: format.size, encoding: format.encoding, dryRun }, "import started");
  progress.tell();
  const onHashed = options.onProgress && ((bytes: number) => progress.tell("hash", bytes));
  const fileHash = options.fileHash ?? (await hashFile(options.file, options.signal, onHashed));
  const definitionHash = hashValue(def);
  const full = options.changes?.full === true;
  const sendsChangedOnly = options.changes !== undefined && !full;
  // The ledger is kept under the file's hash and this key: the definition, and the service the people
  // go to, so that a rehearsal against the emulator does not make the real import of the same file look
  // done. A change-only run numbers its batches after leaving the unchanged out, so it keeps a ledger of
  // its own rather than resume a full run's numbering; batches cut while the file is read (merge-phase.ts)
  // are numbered otherwise than the two-pass batches of earlier versions, whose ledgers are not resumed.
  const ledgerKey = hashValue({
    definitionHash,
    service: options.client?.baseUrl ?? null,
    ...(sendsChangedOnly ? { sends: "changed" } : {}),
    batches: "streamed",
  });
  const hashed = Date.now();
  const opened =
    options.ledger && !dryRun
      ? await openImportLedger({
          ...options.ledger,
          fileHash,
          ledgerKey,
          sendsChangedOnly,
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
    encoding: format.encoding,
    delimiter: format.delimiter === "\t" ? "tab" : format.delimiter,
    fileHash,
    definitionHash,
  };
  const notes = format.encodingNote ? [format.encodingNote] : [];
  const counts = new ImportCounts(identity, { started, hashed }, notes, def.invalidOptionalValues ?? "drop");
  progress.counts = counts;
  progress.tell("read", 0);
  return { job, format, ledger: opened?.ledger, counts, progress };
}
