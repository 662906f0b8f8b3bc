import { describe, expect, it } from "vitest";
import { openQueues, queueConnection } from "../../src/queue/queues.ts";
import {
  addParticipants,
  answered,
  createProject,
  exportJob,
  faultHarness,
  importJob,
  openTestQueues,
  peopleCsv,
  startWorkerProcess,
  waitForCompletion,
  waitUntil,
} from "./helpers.ts";

interface JournalEntry {
  seq: number;
  at: number;
  route: string;
  status: string;
}

const WINDOW_MS = 2000;
// One request per window: whoever gets the slot at a reset is the only one that window, so the order is the priority.
const QUOTA = 1;
const PAGES = 10;
// Three batches: three resets at which the export also wants the one slot.
const BATCHES = 3;
const EXPORTS = ["nightly-a", "nightly-b", "nightly-c"];

const h = faultHarness();

async function journal(since = 0): Promise<JournalEntry[]> {
  const res = await h.emu.admin(`/requests/journal?since=${since}`);
  if (!res.ok) throw new Error(`journal answered ${res.status}`);
  return ((await res.json()) as { entries: JournalEntry[] }).entries;
}

describe("work a person waits for, while a scheduled export spends the whole budget", () => {
  it("sends the hand-enqueued import's first request at the next reset, before the export's remaining pages", async () => {
    const PAGE_SIZE = 5;
    await addParticipants(h.emu, "study_5", "prio", PAGES * PAGE_SIZE);
    // The quota from now on, so the seeding above spent none of it.
    const limited = await h.emu.admin("/rate-limit", {
      body: { requests: QUOTA, windowSeconds: WINDOW_MS / 1000 },
    });
    expect(limited.status).toBe(200);
    await h.emu.admin("/requests", { method: "DELETE" });
    h.project = await createProject({
      redisUrl: h.redis.url,
      emulator: h.emu,
      // Waits on the budget stay on the worker slot (no pause to delayed), so each export asks at every reset.
      // Three scheduled exports at once, each into its own folder (so no run lock keeps them apart): three
      // background requests wait at every reset beside the import's one.
      queue: { budgetWaitBoundMs: 60_000, concurrency: { exports: EXPORTS.length } },
      // Under this binding quota an import would send its ten people in one request of up to 1,000; held to the
      // job's four a request, its three batches each need a slot, and must take each one before the exports.
      imports: { maxBatchSize: 4 },
      jobs: {
        "prio-import": importJob(4),
        ...Object.fromEntries(
          EXPORTS.map((name) => [
            name,
            { ...exportJob(["study_5"], PAGE_SIZE), sink: `file:./data/${name}` },
          ]),
        ),
      },
    });
    const people = peopleCsv("prio", 10);
    const file = await h.project.file("people.csv", people.csv);
    h.tq = openTestQueues(h.project);

    const worker = startWorkerProcess(h.project, "worker");
    h.workers.push(worker);
    await worker.ready;

    // The exports as their scheduler adds them: origin schedule, so its requests are background.
    const queues = openQueues(h.project.config, queueConnection(h.project.config));
    try {
      for (const name of EXPORTS) {
        await queues.exports.add(
          "export",
          { kind: "export", job: name, origin: "schedule" },
          { jobId: name, priority: 10 },
        );
      }
    } finally {
      await queues.close();
    }

    // Wait until the exports have spent a few windows' budget, then enqueue just after a page was answered:
    // the current window's one request is spent, so the import must wait for the next reset with the exports.
    await waitUntil(
      "the export spending the budget",
      async () => (await answered(h.emu, "searchParticipants")) >= EXPORTS.length,
      {
        timeoutMs: 20_000,
        context: () => worker.tail(),
      },
    );
    const before = await journal();
    const mark = before.at(-1)?.seq ?? 0;
    const importId = await h.tq.importFile(file, "prio-import");

    await waitUntil(
      "the import's requests",
      async () => (await answered(h.emu, "importParticipants")) >= BATCHES,
      {
        timeoutMs: (BATCHES + 2) * WINDOW_MS + 5000,
        context: () => worker.tail(),
      },
    );
    const after = await journal(mark);
    const firstImport = after.find((e) => e.route === "importParticipants");
    expect(firstImport, JSON.stringify(after)).toBeDefined();
    if (!firstImport) return;
    const lastImport = after.filter((e) => e.route === "importParticipants").at(-1);
    const pagesBetween = after.filter(
      (e) => e.route === "searchParticipants" && lastImport !== undefined && e.seq < lastImport.seq,
    );
    // The import took every slot that opened after it was enqueued: not one export page came before or between its batches.
    expect(pagesBetween, JSON.stringify(after)).toEqual([]);
    // So the first request answered after the enqueue is the import's: with one request per window, it went out at
    // the first reset after the enqueue, within one rate window.
    expect(after[0]?.route, JSON.stringify(after)).toBe("importParticipants");
    // And the export really still had pages to fetch: the import went ahead of them, not after them.
    const exportPages = await answered(h.emu, "searchParticipants");
    expect(exportPages).toBeLessThan(EXPORTS.length * PAGES);
    for (const name of EXPORTS) expect(await h.tq.state("exports", name)).toBe("active");

    const job = await waitForCompletion(h.tq, "imports", importId, { context: () => worker.tail() });
    expect(job.returnvalue).toBeDefined();
    // Nothing was refused, not even the exports' first requests: one probe taught the fleet the quota.
    expect((await journal()).filter((e) => e.status === "429")).toEqual([]);
  }, 60_000);
});
