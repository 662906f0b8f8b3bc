import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { CsvFormat } from "./csv-format.ts";
import type { RunImportOptions } from "./import-options.ts";
import { PersonStore } from "./person-store.ts";
import { RejectsWriter } from "./rejects-writer.ts";
import { RequestsWriter } from "./requests-writer.ts";
import { RunFiles } from "./run-files.ts";
import { openSpillFolder } from "./spill-folder.ts";

/** The run's files (run-files.ts), in a spill folder of its own, removed again if they cannot all be opened. */
export async function openRunFiles(options: RunImportOptions, format: CsvFormat): Promise<RunFiles> {
  const work = await openSpillFolder({
    root: options.workDir ?? path.join(tmpdir(), "recruit-sync-spill"),
    ...(options.lockKey ? { lockKey: options.lockKey } : {}),
    ...(options.ledger ? { redis: options.ledger.redis } : {}),
  });
  try {
    // What moves the spill's folder: the CLI and the workers put it under paths.dataDir.
    const setting = options.workDir ? "paths.dataDir in the configuration" : "TMPDIR";
    const identifier = options.definition.target.identifier;
    return new RunFiles(work, {
      store: await PersonStore.create(path.join(work, "rows.spill"), identifier, setting),
      rejects: new RejectsWriter(options.rejectsFile, undefined, {
        delimiter: format.delimiter,
        bom: format.bom,
      }),
      requests: new RequestsWriter(options.dryRun ? (options.requestsFile ?? null) : null),
    });
  } catch (err) {
    await rm(work, { recursive: true, force: true });
    throw err;
  }
}
