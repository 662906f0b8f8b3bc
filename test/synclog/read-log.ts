import { createSink } from "../../src/sinks/create-sink.ts";
import { SYNC_LOG_TABLE } from "../../src/synclog/table.ts";

/** A warehouse's sync_log rows and sync_runs rows, read through its sink. */
export async function readLog(url: string) {
  const sink = await createSink(url);
  try {
    await sink.prepare([SYNC_LOG_TABLE]);
    return { log: await sink.readTable("sync_log"), runs: await sink.readRuns() };
  } finally {
    await sink.close();
  }
}
