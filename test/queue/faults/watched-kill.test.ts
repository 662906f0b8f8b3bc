import { readdir, readFile, rename, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parse as parseYaml, stringify as toYaml } from "yaml";
import {
  answered,
  createProject,
  faultHarness,
  importJob,
  largePeopleCsv,
  notExactlyOnce,
  openTestQueues,
  type Project,
  startWorkerProcess,
  type WorkerProcess,
  waitUntil,
} from "../helpers.ts";

const h = faultHarness();

function worker(p: Project, name: string): WorkerProcess {
  const w = startWorkerProcess(p, name);
  h.workers.push(w);
  return w;
}

async function files(dir: string): Promise<string[]> {
  return (await readdir(dir).catch(() => [] as string[])).sort();
}

describe("a watched folder's file when its workers are killed mid-import", () => {
  it("is filed in processed/ only once its job completed, every person imported once, nothing in failed/", async () => {
    const ROWS = 3000;
    h.project = await createProject({
      redisUrl: h.redis.url,
      emulator: h.emu,
      jobs: { "faults-import": importJob(50) },
    });
    const configFile = path.join(h.project.configDir, "default.yaml");
    const config = parseYaml(await readFile(configFile, "utf8"));
    config.watch = [{ folder: "./inbox", job: "faults-import", stableMs: 200 }];
    await writeFile(configFile, toYaml(config));
    const inbox = path.join(h.project.dir, "inbox");
    // Slow enough that the kills land with most of the batches still to send.
    await h.emu.admin("/faults", { body: { route: "importParticipants", latencyMs: [40, 80] } });

    const workers = [worker(h.project, "first worker"), worker(h.project, "second worker")];
    await Promise.all(workers.map((w) => w.ready));
    // Over 4 MB: the import reads and maps it on its parse thread when the worker is killed.
    const { csv, emails } = largePeopleCsv("watched-kill", ROWS);
    const staged = await h.project.file("k.csv", csv);
    await rename(staged, path.join(inbox, "k.csv"));
    await waitUntil("10 import requests", async () => (await answered(h.emu, "importParticipants")) >= 10);
    for (const w of workers) w.kill("SIGKILL");
    await Promise.all(workers.map((w) => w.exited));
    expect(await files(path.join(inbox, "processing"))).toEqual(["k.csv"]);

    // One worker comes back: at start it finds k.csv in processing/ and its job still active (its worker dead).
    const again = worker(h.project, "restarted worker");
    await again.ready;
    h.tq = openTestQueues(h.project);
    const processed = path.join(inbox, "processed");
    const report = await waitUntil(
      "k.csv filed",
      async () => {
        const names = await files(processed);
        if (!names.includes("k.csv.report.json")) return undefined;
        return JSON.parse(await readFile(path.join(processed, "k.csv.report.json"), "utf8"));
      },
      { timeoutMs: 60_000, context: again.tail },
    );
    expect(report, "filed as a duplicate of its own job, before the job ran").not.toHaveProperty(
      "duplicateOf",
    );
    expect(report).toMatchObject({ rowsRead: ROWS, imported: ROWS, rejected: 0 });
    const job = await h.tq.job("imports", report.jobId);
    expect(await job?.getState()).toBe("completed");
    expect(await notExactlyOnce(h.emu, emails)).toEqual([]);
    expect(await files(path.join(inbox, "failed"))).toEqual([]);
    expect(await files(path.join(inbox, "processing"))).toEqual([]);
  }, 120_000);
});
