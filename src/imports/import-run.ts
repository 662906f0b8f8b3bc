import { Batcher } from "./batch.ts";
import type { RunImportOptions } from "./import-options.ts";
import { StreamMerge } from "./merge-phase.ts";
import type { OpenedImport } from "./open-import.ts";
import type { RunFiles } from "./run-files.ts";
import { SendGate } from "./send-gate.ts";

/** A run past its open phase: what every later phase reads and writes. */
export interface ImportRun extends OpenedImport {
  options: RunImportOptions;
  files: RunFiles;
  merge: StreamMerge;
  gate: SendGate;
}

/** The merge, and the gate that opens sending once the first rows are judged. */
export function startRun(options: RunImportOptions, opened: OpenedImport, files: RunFiles): ImportRun {
  const def = options.definition;
  const { counts, job, ledger } = opened;
  let gate: SendGate | undefined;
  const merge = new StreamMerge({
    store: files.store,
    batcher: new Batcher(() => undefined),
    sieving: options.changes !== undefined,
    onUnchanged: (entry) => {
      counts.send.hold(entry);
      options.personLog?.held(entry);
    },
    // A few batches of slack between reading and sending (docs/performance.md has the runs with one, two and six):
    // each waiting batch holds 1,000 people on the main thread's heap, long enough to be promoted.
    maxQueued: () => (gate as SendGate).inFlight + 2,
  });
  gate = new SendGate(options, { def, job, ledger, merge, counts });
  return { ...opened, options, files, merge, gate };
}
