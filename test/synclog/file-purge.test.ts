import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FileSink } from "../../src/sinks/file/file-sink.ts";
import { purgeSyncLog } from "../../src/synclog/purge.ts";
import { SYNC_LOG_TABLE } from "../../src/synclog/table.ts";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "file-purge-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const row = (digest: string, loggedAt: string) => ({
  run_id: "r1",
  person_digest: digest,
  job: "j",
  study_id: "s",
  identifier: "email",
  source_rows: [2],
  outcome: "imported",
  reason: null,
  codes: null,
  import_id: "imp_1",
  verification: "verified",
  logged_at: new Date(loggedAt),
  checked_at: null,
});

describe("the retention purge of a file warehouse", () => {
  it("rewrites a part holding old and new rows without the old ones, and deletes a part left empty", async () => {
    const sink = new FileSink(dir);
    await sink.prepare([SYNC_LOG_TABLE]);
    // As a read-back check commits them: rows of runs logged at different times, in one part.
    await sink.commit({
      runId: "check",
      upsert: {
        table: "sync_log",
        rows: [row("old-a", "2026-01-01T00:00:00Z"), row("new-b", "2026-03-01T00:00:00Z")],
      },
    });
    await sink.commit({
      runId: "r0",
      upsert: { table: "sync_log", rows: [row("old-c", "2026-01-02T00:00:00Z")] },
    });
    await sink.close();

    expect(await purgeSyncLog(`file:${dir}`, new Date("2026-02-01T00:00:00Z"))).toBe(2);
    expect(await purgeSyncLog(`file:${dir}`, new Date("2026-02-01T00:00:00Z"))).toBe(0);

    const again = new FileSink(dir);
    await again.prepare([SYNC_LOG_TABLE]);
    expect((await again.readTable("sync_log")).map((r) => r.person_digest)).toEqual(["new-b"]);
    await again.close();
    const manifest = (await readFile(path.join(dir, "_manifest.ndjson"), "utf8"))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { part: { csv: string; ndjson: string } });
    const [mixed, gone] = manifest.map((e) => e.part);
    const csv = (await readFile(path.join(dir, mixed?.csv as string), "utf8")).trim().split("\n");
    expect(csv).toHaveLength(2);
    expect(csv[0]).toMatch(/^run_id,person_digest,/);
    expect(csv[1]).toContain("new-b");
    expect((await stat(path.join(dir, mixed?.ndjson as string))).mode & 0o777).toBe(0o600);
    await expect(stat(path.join(dir, gone?.ndjson as string))).rejects.toThrow();
    await expect(stat(path.join(dir, gone?.csv as string))).rejects.toThrow();
  });
});
