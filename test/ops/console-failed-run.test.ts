import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OpsServer } from "../../src/ops/index.ts";
import { followJob, type RunningWorker } from "../../src/queue/index.ts";
import { AUTH, call, type OpsProject, type OpsStack, startOpsStack } from "./ops-fixture.ts";

const CONSOLE = { ...AUTH, "x-requested-with": "recruit-sync-console" };

interface Uploaded {
  uploadId: string;
  suggestion: { definition: Record<string, unknown> };
}

async function upload(url: string, csv: string, name: string): Promise<Uploaded> {
  const form = new FormData();
  form.append("file", new Blob([csv], { type: "text/csv" }), name);
  const res = await fetch(`${url}/api/uploads`, { method: "POST", headers: CONSOLE, body: form });
  expect(res.status).toBe(201);
  return (await res.json()) as Uploaded;
}

/** 120 rows, 100 of them with no usable email: the run is refused as mostly rejected. */
function mostlyWrong(): string {
  const lines = ["Email,First Name"];
  for (let i = 0; i < 120; i++) {
    lines.push(i < 20 ? `person${i}@example.org,P${i}` : `nobody-${i},N${i}`);
  }
  return `${lines.join("\n")}\n`;
}

/** German national numbers: without a phone country none of them can be read. */
function nationalPhones(): string {
  const lines = ["Vorname,Mobiltelefon"];
  for (let i = 0; i < 10; i++) lines.push(`V${i},0151 2345 67${String(i).padStart(2, "0")}`);
  return `${lines.join("\n")}\n`;
}

describe("the console with a run that fails and with national phone numbers", () => {
  let project: OpsProject;
  let worker: RunningWorker;
  let ops: OpsServer;

  let stack: OpsStack;
  beforeAll(async () => {
    stack = await startOpsStack();
    ({ project, worker, ops } = stack);
  });
  afterAll(async () => {
    await stack?.close();
  });

  it("a refused run offers its rejects for download and names no path on the server", {
    timeout: 30_000,
  }, async () => {
    const { uploadId, suggestion } = await upload(ops.url, mostlyWrong(), "wrong.csv");
    const definition = {
      ...suggestion.definition,
      target: { studyId: "study_1", identifier: "email" },
    };
    // The preview, a dry run, says beforehand what the real run will do.
    const preview = await call(`${ops.url}/api/uploads/${uploadId}/preview`, {
      headers: CONSOLE,
      body: { definition },
    });
    expect(preview.status).toBe(200);
    expect((preview.body as { report: { wouldBeRefused?: string } }).report.wouldBeRefused).toMatch(
      /^a real run would be refused \(import_mostly_rejected\): 100 of the first 120 rows were rejected/,
    );
    const res = await call(`${ops.url}/api/uploads/${uploadId}/run`, {
      headers: CONSOLE,
      body: { definition },
    });
    expect(res.status).toBe(202);
    const { jobId } = res.body as { jobId: string };
    const end = await followJob(worker.queues.imports, jobId, () => {});
    expect(end.state).toBe("failed");
    const status = await call(`${ops.url}/api/runs/imports/${jobId}`, { headers: AUTH });
    const body = status.body as {
      state: string;
      rejectsFile: string | null;
      failure: { code: string; message: string };
    };
    expect(body.state).toBe("failed");
    expect(body.failure.code).toBe("import_mostly_rejected");
    expect(body.failure.message).toContain("100 of the first 120 rows were rejected");
    expect(body.failure.message).not.toContain(project.dir);
    expect(body.failure.message).toContain("the rejects file");
    expect(body.rejectsFile).not.toBeNull();
    const rejects = await fetch(`${ops.url}/api/runs/imports/${jobId}/rejects.csv`, { headers: AUTH });
    expect(rejects.status).toBe(200);
    expect((await rejects.text()).trim().split("\n")).toHaveLength(101);
  });

  it("a phone country set on the page reads national numbers", { timeout: 30_000 }, async () => {
    const { uploadId, suggestion } = await upload(ops.url, nationalPhones(), "kontakte.csv");
    const base: Record<string, unknown> = {
      ...suggestion.definition,
      columns: [
        { column: "Vorname", to: "firstName" },
        { column: "Mobiltelefon", to: "phone", transforms: ["phone"] },
      ],
      target: { studyId: "study_1", identifier: "phone" },
    };
    delete base.phoneCountry;
    const preview = (definition: unknown) =>
      call(`${ops.url}/api/uploads/${uploadId}/preview`, { headers: CONSOLE, body: { definition } });
    const without = await preview(base);
    expect(without.status).toBe(200);
    expect((without.body as { report: { rejected: number } }).report.rejected).toBe(10);
    const withCountry = await preview({ ...base, phoneCountry: "DE" });
    expect(withCountry.status).toBe(200);
    const report = (withCountry.body as { report: { rejected: number; imported: number } }).report;
    expect(report).toMatchObject({ rejected: 0, imported: 10 });
    const sent = (withCountry.body as { sent: { person: { phone?: string } }[] }).sent;
    expect(sent[0]?.person.phone).toBe("+4915123456700");
  });
});
