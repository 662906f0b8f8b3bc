import type { CsvSource } from "./read-records.ts";
import type { RejectsWriter } from "./rejects-writer.ts";
import { SERVICE_REJECTED } from "./row-issue.ts";

/** The rows the service refused, their cells read back from the file into the rejects file. */
export async function writeLateRejects(
  csv: CsvSource,
  late: ReadonlyMap<number, string>,
  rejects: RejectsWriter,
  signal: AbortSignal | undefined,
  worker: boolean | undefined,
): Promise<void> {
  for await (const chunk of csv.records(signal, worker === undefined ? {} : { worker })) {
    for (let i = 0; i < chunk.length; i++) {
      const reason = late.get(chunk.firstRow + i);
      if (reason === undefined) continue;
      const wait = rejects.write(chunk.firstRow + i, reason, [SERVICE_REJECTED], chunk.cells(i));
      if (wait) await wait;
    }
  }
}
