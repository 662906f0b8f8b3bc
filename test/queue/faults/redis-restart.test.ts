import { describe, expect, it } from "vitest";
import {
  addParticipants,
  answered,
  createProject,
  exportJob,
  faultHarness,
  IMPORT_IN_FLIGHT,
  importJob,
  notExactlyOnce,
  openTestQueues,
  participantIds,
  peopleCsv,
  readWarehouse,
  startWorkerProcess,
  waitForCompletion,
  waitUntil,
} from "../helpers.ts";

// Append-only with an fsync per write, as production Redis runs: a restart keeps the queues.
const h = faultHarness({ persistentRedis: true });

/**
 * With a lease longer than the restart, the runs wait for Redis and go on
 * where they were; with a shorter one, their locks run out, the runs stop and
 * the jobs are taken up again, resuming from the ledger and the committed cursor.
 */
describe.each([
  { lockMs: 30_000, outageMs: 2000, leaseRunsOut: false, lease: "outlives the restart" },
  { lockMs: 3000, outageMs: 4000, leaseRunsOut: true, lease: "runs out during the restart" },
])(
  "Redis restarted in the middle of a run, when the job lease $lease",
  ({ lockMs, outageMs, leaseRunsOut }) => {
    it("the workers reconnect and finish: every batch sent once, every participant in the warehouse", async () => {
      const ROWS = 3000;
      const BATCHES = ROWS / 50;
      await addParticipants(h.emu, "study_5", "redis", 1500);
      const expected = await participantIds(h.emu, "study_5");
      h.project = await createProject({
        redisUrl: h.redis.url,
        emulator: h.emu,
        queue: { lockMs },
        jobs: { "faults-import": importJob(50), "faults-export": exportJob(["study_5"], 50) },
      });
      const { csv, emails } = peopleCsv("redis", ROWS);
      const file = await h.project.file("people.csv", csv);
      await h.emu.admin("/faults", { body: { route: "*", latencyMs: [30, 60] } });
      h.tq = openTestQueues(h.project);

      const fleet = [startWorkerProcess(h.project, "worker 1"), startWorkerProcess(h.project, "worker 2")];
      h.workers.push(...fleet);
      await Promise.all(fleet.map((w) => w.ready));
      const tails = () => fleet.map((w) => w.tail()).join("");
      const importId = await h.tq.importFile(file, "faults-import");
      const exportId = await h.tq.exportJob("faults-export");
      await waitUntil("10 import requests", async () => (await answered(h.emu, "importParticipants")) >= 10, {
        context: tails,
      });

      await h.redis.stop();
      const sentWhileUp = await answered(h.emu, "importParticipants");
      await new Promise((r) => setTimeout(r, outageMs));
      // Every request waits for the shared budget in Redis: nothing more went out while it was down.
      expect((await answered(h.emu, "importParticipants")) - sentWhileUp).toBeLessThanOrEqual(
        IMPORT_IN_FLIGHT,
      );
      await h.redis.start();

      await waitForCompletion(h.tq, "imports", importId, { context: tails });
      await waitForCompletion(h.tq, "exports", exportId, { context: tails });
      for (const w of fleet) expect((await w.stop()).code, w.tail()).toBe(0);
      expect(sentWhileUp).toBeLessThan(BATCHES);
      const sent = await answered(h.emu, "importParticipants");
      expect(sent).toBeGreaterThanOrEqual(BATCHES);
      expect(sent - BATCHES).toBeLessThanOrEqual(IMPORT_IN_FLIGHT);
      expect(await notExactlyOnce(h.emu, emails)).toEqual([]);
      const warehouse = await readWarehouse(h.project.warehouseFile);
      const ids = warehouse.participants.map((p) => p.participantId);
      expect(ids.length).toBe(expected.length);
      expect(new Set(ids)).toEqual(new Set(expected));
      expect(await h.tq.counts("imports")).toMatchObject({ completed: 1, failed: 0 });
      expect(await h.tq.counts("exports")).toMatchObject({ completed: 1, failed: 0 });

      const logs = fleet.map((w) => w.stderr()).join("");
      const pages = Math.ceil(expected.length / 50);
      if (leaseRunsOut) {
        // The runs whose lease ran out stopped and their jobs were taken up again, without a failure.
        expect(logs).toContain("job lease ran out");
        expect(await answered(h.emu, "searchParticipants")).toBeLessThanOrEqual(2 * pages);
      } else {
        // The runs waited for Redis and went on where they were: no page read twice.
        expect(logs).not.toContain("job lease ran out");
        expect(await answered(h.emu, "searchParticipants")).toBe(pages);
      }
    }, 60_000);
  },
);
