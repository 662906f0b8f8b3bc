import type { Commit, CommitResult, Sink } from "../sinks/index.ts";

/**
 * The sink as the streams of one run share it: their commits apply one at a
 * time, in the order they were asked for. The DuckDB and file sinks queue
 * their statements already; the PostgreSQL sink would run each commit on a
 * connection of its own, and two streams of one resource could then write
 * that resource's sync_runs row out of order. Commits are a small part of an
 * export's time, and each stream still fetches while its commit waits.
 */
export function commitsInOrder(sink: Sink): Sink {
  let queue: Promise<unknown> = Promise.resolve();
  return {
    kind: sink.kind,
    displayUrl: sink.displayUrl,
    prepare: (tables) => sink.prepare(tables),
    readState: (stream) => sink.readState(stream),
    readKeys: (query) => sink.readKeys(query),
    readTable: (table) => sink.readTable(table),
    readRuns: () => sink.readRuns(),
    close: () => sink.close(),
    commit(commit: Commit): Promise<CommitResult> {
      const next = queue.then(() => sink.commit(commit));
      queue = next.catch(() => undefined);
      return next;
    },
  };
}
