import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.ts";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import { MID_COPY, stallAt } from "../helpers/pg-stall.ts";
import { type TestSchema, withTestSchema } from "../helpers/postgres.ts";
import { addParticipants, participantIds } from "../queue/helpers.ts";
import { type TestProject, testProject } from "../queue/runtime-fixture.ts";

/** Over two checkpoints (5,000 rows each) of one study: the second checkpoint's COPY is the one cut. */
const ADDED = 11_000;

describe("recruit-sync export --inline whose PostgreSQL backend is ended during a COPY", () => {
  let emu: TestEmulator;
  let project: TestProject;
  let schema: TestSchema;
  beforeAll(async () => {
    emu = await startTestEmulator();
    await addParticipants(emu, "study_1", "copy-lost", ADDED);
    project = await testProject({ baseUrl: emu.baseUrl, token: emu.token });
    schema = await withTestSchema();
  });
  afterAll(async () => {
    await schema.cleanup();
    await project.cleanup();
    await emu.close();
  });

  it("fails in one line with its run marked failed, and a rerun at once completes it exactly", async () => {
    const proxy = await stallAt(MID_COPY(2));
    try {
      const warehouse = proxy.through(schema.url);
      const exportOnce = () =>
        runCli(
          [
            "export",
            "participants",
            "--study",
            "study_1",
            "--inline",
            "--no-shared-budget",
            "--warehouse",
            warehouse,
          ],
          { env: { ...project.env, LOG_LEVEL: "silent" }, cwd: project.dir, timeoutMs: 120_000 },
        );
      const first = exportOnce();
      await proxy.stalled;
      expect(await proxy.terminate()).toBe(1);
      const failed = await first;

      expect(failed.code).toBe(1);
      const lines = failed.stderr.trim().split("\n");
      expect(lines).toHaveLength(1);
      expect(failed.stderr).not.toMatch(/^\s+at |Unhandled 'error' event/m);
      expect(lines[0]).toMatch(
        /^recruit-sync: export \S+ failed: participants: the PostgreSQL warehouse postgres:\/\/\S+ closed the connection during a commit \(read ECONNRESET\): the commit is kept whole or not at all; run the export again, it resumes from its last checkpoint$/,
      );
      const runs = async () =>
        (await schema.pool.query("select resource, status, pages from sync_runs order by started_at")).rows;
      expect((await runs()).map((r) => r.status)).toEqual(["failed"]);
      // The first checkpoint was committed before the cut one.
      expect(Number((await schema.pool.query("select count(*) from participants")).rows[0].count)).toBe(5000);

      const rerun = await exportOnce();
      expect(rerun.stderr).toBe("");
      expect(rerun.code).toBe(0);
      const expected = await participantIds(emu, "study_1");
      const ids = (
        await schema.pool.query("select participant_id from participants where _deleted_at is null")
      ).rows.map((r) => r.participant_id as string);
      expect(ids.length).toBe(expected.length);
      expect(new Set(ids)).toEqual(new Set(expected));
      const [, second] = await runs();
      expect(second?.status).toBe("succeeded");
      // It began at the committed checkpoint, not at the first page.
      expect(Number(second?.pages)).toBe(Math.ceil((expected.length - 5000) / 100));
    } finally {
      await proxy.close();
    }
  }, 120_000);
});
