import type { ImportRun } from "./import-run.ts";
import { readAndValidate } from "./read-phase.ts";
import { GATE_ROWS } from "./refusal-rule.ts";
import type { RunWarnings } from "./run-warnings.ts";

/** Read and map (read-phase.ts), each valid person merged as it comes (merge-phase.ts), the gate opened on the way. */
export async function readPhase(r: ImportRun, stop: AbortSignal): Promise<RunWarnings> {
  const { options, format, counts, progress, files, gate } = r;
  const read = await readAndValidate({
    file: options.file,
    format,
    definition: options.definition,
    people: r.merge,
    warnings: { workDir: files.work, policy: options.definition.invalidOptionalValues ?? "drop" },
    rejects: files.rejects,
    ...(options.personLog ? { personLog: options.personLog } : {}),
    ...(options.parseInWorker === undefined ? {} : { worker: options.parseInWorker }),
    stamps: options.changes !== undefined,
    signal: options.signal ? AbortSignal.any([options.signal, stop]) : stop,
    onChunk: (bytesRead, c) => {
      counts.read = { ...counts.read, ...c };
      files.store.expect(c.rowsRead + c.blankRows, bytesRead, format.size);
      progress.tell("read", bytesRead);
    },
    gate: {
      rows: GATE_ROWS,
      open: (c, bytesRead) => {
        // The report of a file refused here counts the rows that decided it.
        counts.read = { ...counts.read, ...c };
        gate.open(c, bytesRead, format.size);
      },
    },
  });
  counts.read = {
    ...read.counts,
    unmappedColumns: read.unmappedColumns,
    ignoredColumns: read.ignoredColumns,
  };
  counts.times.read = Date.now();
  const rejected = counts.read.rejected + counts.send.rejected;
  options.logger?.info({ job: r.job, rows: counts.read.rowsRead, rejected }, "file read");
  progress.tell("send", format.size);
  // Out of memory once the file is read: what a killed run leaves is whole on disk, for the rerun to remove.
  await files.store.flush();
  await gate.passed(read.counts, format.size);
  await r.merge.end();
  return read.warnings;
}
