import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.ts";
import {
  createProject,
  faultHarness,
  importJob,
  openTestQueues,
  startWorkerProcess,
  waitUntil,
} from "../queue/helpers.ts";

/** One person's cells, each distinctive enough to find anywhere it leaks. */
const PERSON = ["Janeleak", "Privatperson", "jane.privat@example.org", "+1 415 555 0177", "customer"];
const leaks = (text: string) => PERSON.filter((cell) => text.toLowerCase().includes(cell.toLowerCase()));

describe("a person's data in a file never reaches an error, a log or a report", () => {
  const h = faultHarness();

  it("says a header-less file's first row looks like data, without a cell of it, inline and through a worker", async () => {
    h.project = await createProject({
      redisUrl: h.redis.url,
      emulator: h.emu,
      jobs: { crm: importJob(50) },
    });
    const headerless = `${PERSON.join(",")}\nJohn,Other,john.other@example.org,+1 415 555 0100,lead\n`;
    const file = await h.project.file("headerless.csv", headerless);
    const env = { ...h.project.env, LOG_LEVEL: "debug" };
    const common = ["--config", h.project.configDir, "import"];

    const outputs: string[] = [];
    const inline = await runCli(
      [...common, file, "--job", "crm", "--inline", "--report", "r1.json", "--verbose"],
      {
        env,
        cwd: h.project.dir,
      },
    );
    expect(inline.code).toBe(1);
    expect(inline.stderr).toContain("looks like a person's data, not a header row");
    outputs.push(inline.stdout, inline.stderr);
    const preset = await runCli(
      [...common, file, "--preset", "hubspot", "--study", "study_1", "--inline", "--verbose"],
      { env, cwd: h.project.dir },
    );
    expect(preset.code).toBe(1);
    outputs.push(preset.stdout, preset.stderr);

    // Through a watched folder and a worker: its log, the job's failure and the report beside the file.
    const worker = startWorkerProcess({ ...h.project, env });
    h.workers.push(worker);
    await worker.ready;
    h.tq = openTestQueues(h.project);
    const id = await h.tq.importFile(file, "crm");
    const failed = await waitUntil("the job to fail", async () => {
      const job = await h.tq?.job("imports", id);
      return job && (await job.getState()) === "failed" ? await h.tq?.job("imports", id) : undefined;
    });
    outputs.push(failed?.failedReason ?? "", JSON.stringify(failed?.progress ?? null), worker.stderr());
    for (const name of await readdir(h.project.dir)) {
      if (name.endsWith(".json")) outputs.push(await readFile(path.join(h.project.dir, name), "utf8"));
    }
    expect(failed?.failedReason).toContain("looks like a person's data");
    expect(leaks(outputs.join("\n"))).toEqual([]);
  }, 60_000);

  it("never quotes a rejected row's cells in its reason, and hides a header cell that is an email", async () => {
    h.project = await createProject({
      redisUrl: h.redis.url,
      emulator: h.emu,
      jobs: { crm: importJob(50) },
    });
    const env = { ...h.project.env, LOG_LEVEL: "debug" };
    // An email where a header should be: the job's column is missing, and the header row is not echoed.
    const oddHeader = await h.project.file("odd-header.csv", `Name,${PERSON[2]}\nJaneleak,x\n`);
    const odd = await runCli(
      ["--config", h.project.configDir, "import", oddHeader, "--job", "crm", "--inline", "--verbose"],
      { env, cwd: h.project.dir },
    );
    expect(odd.code).toBe(1);
    // A row whose email is malformed and whose name is the person's: rejected, with a reason that quotes neither.
    const badRow = await h.project.file(
      "bad-row.csv",
      `Email,First Name\nnot-an-email-${PERSON[0]},${PERSON[1]}\n`,
    );
    const rejected = await runCli(
      ["--config", h.project.configDir, "import", badRow, "--job", "crm", "--inline", "--report", "r2.json"],
      { env, cwd: h.project.dir },
    );
    const report = await readFile(path.join(h.project.dir, "r2.json"), "utf8");
    expect(JSON.parse(report)).toMatchObject({ rejected: 1 });
    expect(leaks([odd.stdout, odd.stderr, rejected.stdout, rejected.stderr, report].join("\n"))).toEqual([]);
  }, 60_000);
});
