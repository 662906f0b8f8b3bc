import { appendFile, mkdtemp, readdir, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createSink, MANIFEST_FILE } from "../../src/sinks/index.ts";
import { describeSinkContract, run, WIDGETS, widget } from "./sink-contract.ts";

async function tempDir(): Promise<{ dir: string; cleanup(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), "recruit-sync-files-"));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

describeSinkContract(
  "file",
  async () => {
    const { dir, cleanup } = await tempDir();
    return { open: () => createSink(`file:${join(dir, "lake")}`), cleanup };
  },
  { softDeletes: false },
);

async function listFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) out.push(join(e.parentPath, e.name).slice(dir.length + 1));
  }
  return out.sort();
}

describe("file sink", () => {
  it("writes NDJSON and CSV parts per run, partitioned by resource and date, readable by the owner only", async () => {
    const { dir, cleanup } = await tempDir();
    const sink = await createSink(`file:${dir}`);
    try {
      await sink.prepare([WIDGETS]);
      await sink.commit({ runId: "run1", upsert: { table: "widgets", rows: [widget("w1"), widget("w2")] } });
      const files = await listFiles(dir);
      const date = new Date().toISOString().slice(0, 10);
      expect(files).toEqual([
        MANIFEST_FILE,
        `widgets/date=${date}/run=run1/part-000001.csv`,
        `widgets/date=${date}/run=run1/part-000001.ndjson`,
      ]);
      for (const f of files) expect((await stat(join(dir, f))).mode & 0o777).toBe(0o600);
      const csv = (await readFile(join(dir, files[1]!), "utf8")).split("\n");
      expect(csv[0]).toBe(
        "widget_id,group_id,status,amount_cents,ratio,is_active,start_date,sent_at,tags,note,_raw,_synced_at,_run_id,_deleted_at",
      );
      expect(csv[1]).toMatch(/^w1,g1,UNCLAIMED,1250,0.5,true,2026-03-01,2026-03-01T10:11:12.345Z,"\[""a"",/);
      const ndjson = (await readFile(join(dir, files[2]!), "utf8")).trim().split("\n");
      expect(ndjson.map((l) => JSON.parse(l).widget_id)).toEqual(["w1", "w2"]);
    } finally {
      await sink.close();
      await cleanup();
    }
  });

  it("treats the manifest as the commit log: a torn last line and unlisted parts are not data", async () => {
    const { dir, cleanup } = await tempDir();
    try {
      let sink = await createSink(`file:${dir}`);
      await sink.prepare([WIDGETS]);
      await sink.commit({
        runId: "run1",
        upsert: { table: "widgets", rows: [widget("w1")] },
        state: { stream: "widgets", value: { cursor: "a" } },
        run: run("run1"),
      });
      await sink.close();
      // A process killed while appending leaves half a line behind.
      await appendFile(join(dir, MANIFEST_FILE), '{"seq":2,"runId":"run2","committedAt":"2026-');
      sink = await createSink(`file:${dir}`);
      await sink.prepare([WIDGETS]);
      expect(await sink.readState("widgets")).toEqual({ cursor: "a" });
      await sink.commit({ runId: "run2", upsert: { table: "widgets", rows: [widget("w2")] } });
      expect((await sink.readTable("widgets")).map((r) => r.widget_id)).toEqual(["w1", "w2"]);
      const manifest = (await readFile(join(dir, MANIFEST_FILE), "utf8")).trim().split("\n");
      expect(manifest.map((l) => JSON.parse(l).seq)).toEqual([1, 2]);
      await sink.close();
    } finally {
      await cleanup();
    }
  });
});
