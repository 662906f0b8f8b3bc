import { parentPort } from "node:worker_threads";
import type { SyncRunRecord } from "../sinks/index.ts";
import type { PartsLoad } from "./log-file-sql.ts";
import { loadRunLog, prepareRunLog, type RunLogTarget, writeRunLog } from "./write-run-log.ts";

/** What the run's thread asks of the log's thread (part-loader.ts), and what comes back. */
export type LogThreadCall =
  | { id: number; op: "prepare"; target: RunLogTarget }
  | { id: number; op: "load"; target: RunLogTarget; load: PartsLoad }
  | {
      id: number;
      op: "finish";
      target: RunLogTarget;
      run: SyncRunRecord;
      load: PartsLoad;
      prepared: boolean;
    };

export type LogThreadAnswer = { id: number; rows: number } | { id: number; error: string };

async function answer(call: LogThreadCall): Promise<number> {
  if (call.op === "prepare") {
    await prepareRunLog(call.target);
    return 0;
  }
  if (call.op === "load") return loadRunLog(call.target, undefined, call.load);
  return (await writeRunLog(call.target, call.run, call.load, Promise.resolve(call.prepared))).logged;
}

// The thread of one run's log: DuckDB's library, its loads and PostgreSQL's, off the import's thread.
parentPort?.on("message", (call: LogThreadCall) => {
  void answer(call).then(
    (rows) => parentPort?.postMessage({ id: call.id, rows } satisfies LogThreadAnswer),
    (err: unknown) =>
      parentPort?.postMessage({
        id: call.id,
        error: err instanceof Error ? err.message : String(err),
      } satisfies LogThreadAnswer),
  );
});
