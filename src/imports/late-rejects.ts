import type { CsvFormat } from "./csv-format.ts";
import { readRecords } from "./read-records.ts";
import type { RejectsWriter } from "./rejects-writer.ts";
import { codesOf, type RowProblem, reasonOf } from "./row-problem.ts";

/** The rows the service refused, their cells read back from the file into the rejects file. */
export async function writeLateRejects(
  format: CsvFormat,
  late: ReadonlyMap<number, readonly RowProblem[]>,
  rejects: RejectsWriter,
  signal: AbortSignal | undefined,
  worker: boolean | undefined,
): Promise<void> {
  for await (const chunk of readRecords(format, signal, worker === undefined ? {} : { worker })) {
    for (let i = 0; i < chunk.length; i++) {
      const problems = late.get(chunk.firstRow + i);
      if (problems === undefined) continue;
      const wait = rejects.write(chunk.firstRow + i, reasonOf(problems), codesOf(problems), chunk.cells(i));
      if (wait) await wait;
    }
  }
}
