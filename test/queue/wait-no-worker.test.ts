import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.ts";
import { createProject, faultHarness, importJob, peopleCsv, startWorkerProcess } from "./helpers.ts";

describe("import --wait", () => {
  const h = faultHarness();

  it("says within seconds, in plain words, that no worker serves the queue, and finishes once one starts", async () => {
    h.project = await createProject({ redisUrl: h.redis.url, emulator: h.emu, jobs: { crm: importJob(50) } });
    const file = await h.project.file("people.csv", peopleCsv("no-worker", 20).csv);
    const started = Date.now();
    const waiting = runCli(["--config", h.project.configDir, "import", file, "--job", "crm", "--wait"], {
      env: h.project.env,
      cwd: h.project.dir,
      timeoutMs: 60_000,
    });
    // No worker for a while: the command must say so on its own, then carry on once a worker comes.
    await new Promise((r) => setTimeout(r, 6000));
    const worker = startWorkerProcess(h.project);
    h.workers.push(worker);
    await worker.ready;
    const r = await waiting;
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.split("\n");
    const said = lines.find((l) => l.includes("no worker serves the imports queue under prefix"));
    expect(said).toMatch(/^waiting for a worker: no worker serves the imports queue under prefix test-/);
    expect(said).toContain("recruit-sync worker");
    expect(lines.some((l) => /\bprioritized\b/.test(l))).toBe(false);
    expect(r.stdout).toMatch(/^completed: /m);
    expect(Date.now() - started).toBeLessThan(60_000);
  }, 90_000);
});
