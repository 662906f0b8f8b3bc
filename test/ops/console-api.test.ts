import { cp, mkdir, readdir, readFile, rm, stat, utimes, writeFile } from "node:fs/promises";
import http from "node:http";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readJobFile } from "../../src/config/index.ts";
import {
  BudgetAnswer,
  PreviewAnswer,
  RecentRuns,
  Refusal,
  RunQueued,
  RunStatus,
  SavedJob,
  UploadAnswer,
} from "../../src/ops/console/api-contract.ts";
import { bundlePage } from "../../src/ops/console/page-bundle.ts";
import { type OpsServer, startOpsServer } from "../../src/ops/index.ts";
import { followJob, type RunningWorker, startWorker } from "../../src/queue/index.ts";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import { AUTH, call, type OpsProject, REPO_JOBS, withOpsProject } from "./ops-fixture.ts";

/** The page's header on every request that changes something (docs/console.md). */
const CONSOLE = { ...AUTH, "x-requested-with": "recruit-sync-console" };

/** People's cells: none of them may appear in a log line. */
const CELLS = [
  "quillon.vandermeer@example.org",
  "Quillon",
  "Vandermeer",
  "ysolde.brackwater@example.org",
  "Ysolde",
  "Brackwater",
  "not-an-email-zorbit",
  "Zorbit",
  "Klausewitz",
  "ottoline.fairweather@example.org",
  "Ottoline",
  "zorbit.klausewitz@example.org",
];
const CSV = [
  "Email,First Name,Last Name,Favourite Colour",
  "Quillon.Vandermeer@Example.org,Quillon,Vandermeer,teal",
  "ysolde.brackwater@example.org,Ysolde,Brackwater,ochre",
  "not-an-email-zorbit,Zorbit,Klausewitz,mauve",
  "ottoline.fairweather@example.org,Ottoline,Fairweather,umber",
  "",
].join("\n");

async function upload(
  url: string,
  content: string | Uint8Array,
  options: { name?: string; field?: string; headers?: Record<string, string> } = {},
) {
  const form = new FormData();
  form.append(
    options.field ?? "file",
    new Blob([content], { type: "text/csv" }),
    options.name ?? "contacts.csv",
  );
  const res = await fetch(`${url}/api/uploads`, {
    method: "POST",
    headers: options.headers ?? CONSOLE,
    body: form,
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {}
  return { status: res.status, body: body as Record<string, unknown>, headers: res.headers };
}

/**
 * An upload the server refuses before it has read the whole body: it answers
 * 413 and closes, and a client still writing sees EPIPE. fetch() then drops
 * the answer (Node 24's more often than Node 20's); a browser reads it. This
 * client, like a browser, keeps the answer that came.
 */
async function uploadRefusedEarly(url: string, content: string) {
  const form = new FormData();
  form.append("file", new Blob([content], { type: "text/csv" }), "contacts.csv");
  const request = new Request(`${url}/api/uploads`, { method: "POST", body: form });
  const bytes = Buffer.from(await request.arrayBuffer());
  return new Promise<{ status: number; body: Record<string, unknown> }>((resolve, reject) => {
    const req = http.request(`${url}/api/uploads`, {
      method: "POST",
      headers: {
        ...CONSOLE,
        "content-type": request.headers.get("content-type") ?? "",
        "content-length": String(bytes.length),
      },
    });
    let answered = false;
    req.on("response", (res) => {
      answered = true;
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        text += chunk;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
    req.on("error", (err) => {
      if (!answered) reject(err);
    });
    req.end(bytes);
  });
}

/** The upload folders kept so far. */
const uploadsIn = (project: OpsProject) =>
  readdir(path.join(project.dir, "data", "uploads")).catch(() => [] as string[]);

const mode = async (p: string) => (await stat(p)).mode & 0o777;

describe("the console's API", () => {
  let emu: TestEmulator;
  let project: OpsProject;
  let worker: RunningWorker;
  let ops: OpsServer;
  let jobsDir: string;
  let uploadId: string;
  let definition: Record<string, unknown>;
  /** The rejects file of the real run, as downloaded. */
  let rejectsText: string;

  beforeAll(async () => {
    emu = await startTestEmulator();
    project = await withOpsProject({ baseUrl: emu.baseUrl, token: emu.token });
    jobsDir = path.join(project.dir, "jobs");
    await cp(REPO_JOBS, jobsDir, { recursive: true });
    const config = {
      ...project.config,
      paths: { ...project.config.paths, jobsDir },
      ops: { ...project.config.ops, uploads: { ...project.config.ops.uploads, maxBytes: 64 * 1024 } },
    };
    worker = await startWorker({ config, logger: project.logger, schedules: false, watch: false });
    ops = await startOpsServer({ config, logger: project.logger, queues: worker.queues });
  });
  afterAll(async () => {
    await ops?.close();
    await worker?.stop();
    await emu?.close();
    await project?.cleanup();
  });

  it("serves the page at / behind basic auth, with a policy that runs only its own script", async () => {
    expect((await call(`${ops.url}/`)).status).toBe(401);
    const res = await call(`${ops.url}/`, { headers: AUTH });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    expect(res.headers.get("content-security-policy")).toContain("default-src 'self'");
    expect(res.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(res.text).toContain('<script src="console.js"');
    const script = await call(`${ops.url}/console.js`, { headers: AUTH });
    expect(script.status).toBe(200);
    expect(script.headers.get("content-type")).toMatch(/^text\/javascript/);
    // From the sources, the page's TypeScript bundled when the server started.
    expect(script.text).toBe((await bundlePage()).code);
    const style = await call(`${ops.url}/ops-pages.css`, { headers: AUTH });
    expect(style.headers.get("content-type")).toMatch(/^text\/css/);
    expect(res.text).toContain('<link rel="stylesheet" href="ops-pages.css"');
  });

  it("stores an upload owner-only and answers its headers, first rows and suggested mapping", async () => {
    const res = await upload(ops.url, CSV);
    expect(res.status).toBe(201);
    // The page reads every answer with the schema the server builds it to.
    expect(UploadAnswer.safeParse(res.body).error).toBeUndefined();
    expect(res.body.uploadId).toMatch(/^[0-9a-f-]{36}$/);
    uploadId = res.body.uploadId as string;
    expect(res.body.headers).toEqual(["Email", "First Name", "Last Name", "Favourite Colour"]);
    expect((res.body.rows as string[][])[0]).toEqual([
      "Quillon.Vandermeer@Example.org",
      "Quillon",
      "Vandermeer",
      "teal",
    ]);
    expect(res.body.fileName).toBe("contacts.csv");
    expect(res.body.rejectsFile).toBe(false);
    const suggestion = res.body.suggestion as {
      columns: { column: string; to: unknown; confidence: number }[];
      definition: Record<string, unknown> | null;
    };
    const email = suggestion.columns.find((c) => c.column === "Email");
    expect(email?.to).toBe("email");
    expect(email?.confidence).toBeGreaterThan(0);
    expect(email?.confidence).toBeLessThanOrEqual(1);
    expect(suggestion.definition).toMatchObject({ kind: "import", name: "contacts" });
    definition = {
      ...(suggestion.definition as Record<string, unknown>),
      target: { studyId: "study_1", identifier: "email" },
    };

    const root = path.join(project.dir, "data", "uploads");
    const dir = path.join(root, uploadId);
    expect(await mode(root)).toBe(0o700);
    expect(await mode(dir)).toBe(0o700);
    for (const f of await readdir(dir)) expect(await mode(path.join(dir, f)), f).toBe(0o600);
    expect(await readFile(path.join(dir, "upload.csv"), "utf8")).toBe(CSV);
  });

  it("refuses what is not a text CSV with one line, keeping nothing", async () => {
    const before = await uploadsIn(project);
    const json = await call(`${ops.url}/api/uploads`, { headers: CONSOLE, body: { file: "x" } });
    expect(json.status).toBe(415);
    expect(json.body).toMatchObject({ error: "ops_upload_not_csv" });

    const png = new Uint8Array([
      0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0, 1,
    ]);
    const binary = await upload(ops.url, png, { name: "photo.png" });
    expect(binary.status).toBe(422);
    expect(binary.body).toMatchObject({ error: "ops_upload_not_csv" });
    expect(binary.body.message).toMatch(/^not a text CSV file: /);
    expect(binary.body.message).not.toContain(project.dir);

    const empty = await upload(ops.url, "");
    expect(empty.status).toBe(422);

    const noField = await upload(ops.url, CSV, { field: "attachment" });
    expect(noField.status).toBe(400);
    expect(noField.body).toMatchObject({ error: "ops_invalid_request", problems: [{ path: "file" }] });

    expect(await uploadsIn(project)).toEqual(before);
  });

  it("refuses an upload over ops.uploads.maxBytes with 413, keeping nothing", async () => {
    const before = await uploadsIn(project);
    const row = "someone@example.org,Some,One,teal\n";
    const big = `Email,First Name,Last Name,Favourite Colour\n${row.repeat(Math.ceil((80 * 1024) / row.length))}`;
    const res = await uploadRefusedEarly(ops.url, big);
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ error: "ops_upload_too_large" });
    expect(res.body.message).toContain("ops.uploads.maxBytes");
    // Declared far larger than the limit: refused before a byte is stored.
    const huge = await uploadRefusedEarly(ops.url, big.repeat(20));
    expect(huge.status).toBe(413);
    expect(huge.body).toMatchObject({ error: "ops_upload_too_large" });
    expect(await uploadsIn(project)).toEqual(before);
  });

  it("refuses state-changing requests a page of another site could make a browser send", async () => {
    const noHeader = await upload(ops.url, CSV, { headers: AUTH });
    expect(noHeader.status).toBe(403);
    expect(noHeader.body).toMatchObject({ error: "ops_cross_site" });
    const otherOrigin = await call(`${ops.url}/api/uploads/${uploadId}/preview`, {
      headers: { ...CONSOLE, origin: "https://evil.example" },
      body: { definition },
    });
    expect(otherOrigin.status).toBe(403);
    const crossSite = await call(`${ops.url}/api/uploads/${uploadId}/run`, {
      headers: { ...CONSOLE, "sec-fetch-site": "cross-site" },
      body: { definition, dryRun: true },
    });
    expect(crossSite.status).toBe(403);
    const save = await call(`${ops.url}/api/jobs`, {
      headers: AUTH,
      body: { name: "from-elsewhere", definition },
    });
    expect(save.status).toBe(403);
    const sameOrigin = await call(`${ops.url}/api/uploads/${uploadId}/preview`, {
      headers: { ...CONSOLE, origin: ops.url, "sec-fetch-site": "same-origin" },
      body: { definition },
    });
    expect(sameOrigin.status).toBe(200);
  });

  it("previews the rows as they would be sent and the rows rejected, with why", async () => {
    const res = await call(`${ops.url}/api/uploads/${uploadId}/preview`, {
      headers: CONSOLE,
      body: { definition },
    });
    expect(res.status).toBe(200);
    expect(PreviewAnswer.safeParse(res.body).error).toBeUndefined();
    const preview = res.body as {
      report: { rowsRead: number; imported: number; rejected: number; dryRun: boolean };
      sent: { path: string; person: { email?: string; firstName?: string } }[];
      rejectedHeaders: string[];
      rejected: { row: number; reason: string; cells: string[] }[];
    };
    expect(preview.report).toMatchObject({ rowsRead: 4, imported: 3, rejected: 1, dryRun: true });
    expect(preview.sent.map((s) => s.person.email)).toEqual([
      "quillon.vandermeer@example.org",
      "ysolde.brackwater@example.org",
      "ottoline.fairweather@example.org",
    ]);
    expect(preview.sent[0]?.path).toBe("/studies/study_1/participants/import");
    expect(preview.rejectedHeaders).toEqual(["Email", "First Name", "Last Name", "Favourite Colour"]);
    expect(preview.rejected).toEqual([
      {
        row: 4,
        reason: expect.stringMatching(/email/i),
        cells: ["not-an-email-zorbit", "Zorbit", "Klausewitz", "mauve"],
      },
    ]);
    // The dry run's files are gone with the answer.
    expect((await readdir(path.join(project.dir, "data", "uploads", uploadId))).sort()).toEqual([
      "upload.csv",
      "upload.json",
    ]);
  });

  it("refuses a preview that does not parse, naming each problem's path", async () => {
    const bad = await call(`${ops.url}/api/uploads/${uploadId}/preview`, {
      headers: CONSOLE,
      body: {
        definition: { ...definition, target: { identifier: "fax" }, batchSize: 0 },
        extra: true,
      },
    });
    expect(bad.status).toBe(400);
    expect(Refusal.safeParse(bad.body).error).toBeUndefined();
    expect(bad.body).toMatchObject({ error: "ops_invalid_request" });
    expect((bad.body as { problems: { path: string }[] }).problems.map((p) => p.path)).toEqual(["(body)"]);
    const worse = await call(`${ops.url}/api/uploads/${uploadId}/preview`, {
      headers: CONSOLE,
      body: { definition: { ...definition, target: { identifier: "fax" }, batchSize: 0 } },
    });
    expect(worse.status).toBe(400);
    expect((worse.body as { problems: { path: string }[] }).problems.map((p) => p.path).sort()).toEqual([
      "definition.batchSize",
      "definition.target.identifier",
      "definition.target.studyId",
    ]);
    const badId = await call(`${ops.url}/api/uploads/not-a-uuid/preview`, {
      headers: CONSOLE,
      body: { definition },
    });
    expect(badId.status).toBe(400);
    expect((badId.body as { problems: { path: string }[] }).problems[0]?.path).toBe("uploadId");
    const unknown = await call(`${ops.url}/api/uploads/00000000-0000-4000-8000-000000000000/preview`, {
      headers: CONSOLE,
      body: { definition },
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ error: "ops_upload_unknown" });
    const missingColumn = await call(`${ops.url}/api/uploads/${uploadId}/preview`, {
      headers: CONSOLE,
      body: {
        definition: { ...definition, columns: [{ column: "E-mail address", to: "email" }] },
      },
    });
    expect(missingColumn.status).toBe(422);
    expect(missingColumn.body).toMatchObject({ error: "file_missing_column" });
  });

  it("runs a dry run through the queue and reports it finished, in plain words", {
    timeout: 30_000,
  }, async () => {
    const res = await call(`${ops.url}/api/uploads/${uploadId}/run`, {
      headers: CONSOLE,
      body: { definition, dryRun: true },
    });
    expect(res.status).toBe(202);
    expect(RunQueued.safeParse(res.body).error).toBeUndefined();
    const { jobId } = res.body as { jobId: string };
    const job = await worker.queues.imports.getJob(jobId);
    expect(job?.data).toMatchObject({ kind: "import", origin: "console", dryRun: true, definition });
    await followJob(worker.queues.imports, jobId, () => {});
    const status = await call(`${ops.url}/api/runs/imports/${jobId}`, { headers: AUTH });
    expect(status.status).toBe(200);
    expect(RunStatus.safeParse(status.body).error).toBeUndefined();
    expect(status.body).toMatchObject({
      state: "completed",
      stateInWords: "completed",
      finished: true,
      report: { dryRun: true, imported: 3, rejected: 1 },
      model: { kind: "import", phase: "done", percent: 100, dryRun: true },
    });
    const recent = await call(`${ops.url}/api/runs?limit=20`, { headers: AUTH });
    expect(RecentRuns.safeParse(recent.body).error).toBeUndefined();
  });

  it("runs the import, and serves its rejects file", { timeout: 30_000 }, async () => {
    const res = await call(`${ops.url}/api/uploads/${uploadId}/run`, {
      headers: CONSOLE,
      body: { definition },
    });
    expect(res.status).toBe(202);
    const { jobId } = res.body as { jobId: string };
    const end = await followJob(worker.queues.imports, jobId, () => {});
    expect(end.state).toBe("completed");
    const status = await call(`${ops.url}/api/runs/imports/${jobId}`, { headers: AUTH });
    expect(status.body).toMatchObject({ report: { dryRun: false, imported: 3, rejected: 1 } });
    const rejects = await fetch(`${ops.url}/api/runs/imports/${jobId}/rejects.csv`, { headers: AUTH });
    expect(rejects.status).toBe(200);
    expect(rejects.headers.get("content-type")).toMatch(/^text\/csv/);
    expect(rejects.headers.get("content-disposition")).toMatch(/^attachment; filename=".*\.rejects\.csv"$/);
    const text = await rejects.text();
    rejectsText = text;
    expect(text.split("\n")[0]).toBe(
      "_source_row,_reject_reason,_reject_code,Email,First Name,Last Name,Favourite Colour",
    );
    expect(text).toContain("not-an-email-zorbit,Zorbit,Klausewitz,mauve");
    const again = await call(`${ops.url}/api/uploads/${uploadId}/run`, {
      headers: CONSOLE,
      body: { definition },
    });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ jobId, duplicate: true });
  });

  it("takes a corrected rejects file back: recognised, read as the import reads it, run with the same definition", {
    timeout: 30_000,
  }, async () => {
    const corrected = rejectsText.replace("not-an-email-zorbit", "zorbit.klausewitz@example.org");
    const up = await upload(ops.url, corrected, { name: "contacts.rejects.csv" });
    expect(up.status).toBe(201);
    expect(up.body).toMatchObject({
      rejectsFile: true,
      // The import drops the rejects file's own columns: the page shows the file's columns as the mapping reads them.
      headers: ["Email", "First Name", "Last Name", "Favourite Colour"],
      rows: [["zorbit.klausewitz@example.org", "Zorbit", "Klausewitz", "mauve"]],
    });
    const correctedId = up.body.uploadId as string;
    const dir = path.join(project.dir, "data", "uploads", correctedId);
    for (const f of await readdir(dir)) expect(await mode(path.join(dir, f)), f).toBe(0o600);

    const preview = await call(`${ops.url}/api/uploads/${correctedId}/preview`, {
      headers: CONSOLE,
      body: { definition },
    });
    expect(preview.status).toBe(200);
    expect((preview.body as { report: unknown }).report).toMatchObject({
      rowsRead: 1,
      imported: 1,
      rejected: 0,
    });
    const run = await call(`${ops.url}/api/uploads/${correctedId}/run`, {
      headers: CONSOLE,
      body: { definition },
    });
    expect(run.status).toBe(202);
    const { jobId } = run.body as { jobId: string };
    expect((await followJob(worker.queues.imports, jobId, () => {})).state).toBe("completed");
    const status = await call(`${ops.url}/api/runs/imports/${jobId}`, { headers: AUTH });
    expect(status.body).toMatchObject({
      report: { rowsRead: 1, imported: 1, rejected: 0 },
      rejectsFile: null,
    });
    const none = await call(`${ops.url}/api/runs/imports/${jobId}/rejects.csv`, { headers: AUTH });
    expect(none.status).toBe(404);
    expect(none.body).toMatchObject({ error: "ops_rejects_unavailable" });
    expect((none.body as { message: string }).message).toContain("no row was rejected");

    // A corrected file that lost a column the mapping reads is refused by the preview, naming it.
    const lines = corrected
      .trim()
      .split("\n")
      .map((l) => l.split(",").slice(0, -2).join(","));
    const short = await upload(ops.url, `${lines.join("\n")}\n`, { name: "short.rejects.csv" });
    expect(short.body).toMatchObject({ rejectsFile: true, headers: ["Email", "First Name"] });
    const refused = await call(`${ops.url}/api/uploads/${short.body.uploadId}/preview`, {
      headers: CONSOLE,
      body: { definition },
    });
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({ error: "file_missing_column" });
    expect((refused.body as { message: string }).message).toContain("Last Name");
  });

  it("lists the budget, the runs going on and waiting, each with when it should finish", async () => {
    const later = await worker.queues.imports.add(
      "later",
      {
        kind: "import",
        job: "hubspot-contacts",
        file: path.join(project.dir, "later.csv"),
        origin: "dashboard",
      },
      { delay: 600_000 },
    );
    try {
      const res = await call(`${ops.url}/api/budget`, { headers: AUTH });
      expect(res.status).toBe(200);
      expect(BudgetAnswer.safeParse(res.body).error).toBeUndefined();
      const view = res.body as {
        budget: { limit: number; remaining: number; resetAt: string } | null;
        running: unknown[];
        waiting: {
          id: string;
          name: string;
          state: string;
          stateInWords: string;
          projectedFinish: null;
          projectionBasis: string;
        }[];
      };
      // The runs above taught the budget: the emulator's 100000 a minute.
      expect(view.budget).toMatchObject({ limit: 100000 });
      expect(view.budget?.remaining).toBeLessThan(100000);
      expect(Date.parse(view.budget?.resetAt ?? "")).toBeGreaterThan(0);
      expect(view.running).toEqual([]);
      expect(view.waiting).toEqual([
        expect.objectContaining({
          id: later.id,
          name: "hubspot-contacts",
          state: "delayed",
          stateInWords: "waiting to be tried again",
          projectedFinish: null,
          projectionBasis: "not started",
          model: expect.objectContaining({
            kind: "pending",
            state: "waiting to be tried again",
            percent: null,
          }),
        }),
      ]);
    } finally {
      await later.remove();
    }
  });

  it("refuses bodies that are not JSON, and multipart bodies that do not close", async () => {
    const text = await fetch(`${ops.url}/api/uploads/${uploadId}/preview`, {
      method: "POST",
      headers: { ...CONSOLE, "content-type": "text/plain" },
      body: "definition=x",
    });
    expect(text.status).toBe(400);
    expect(await text.json()).toMatchObject({
      error: "ops_invalid_request",
      problems: [{ path: "(body)" }],
    });
    const notJson = await fetch(`${ops.url}/api/uploads/${uploadId}/run`, {
      method: "POST",
      headers: { ...CONSOLE, "content-type": "application/json" },
      body: "{not json",
    });
    expect(notJson.status).toBe(400);
    const before = await uploadsIn(project);
    const unclosed = await fetch(`${ops.url}/api/uploads`, {
      method: "POST",
      headers: { ...CONSOLE, "content-type": "multipart/form-data; boundary=XyZ" },
      body: '--XyZ\r\ncontent-disposition: form-data; name="file"; filename="a.csv"\r\n\r\nEmail\nsomeone@example.org\n',
    });
    expect(unclosed.status).toBe(400);
    expect(await unclosed.json()).toMatchObject({ error: "ops_invalid_request" });
    expect(await uploadsIn(project)).toEqual(before);
    const sameSite = await call(`${ops.url}/api/jobs`, {
      headers: { ...CONSOLE, "sec-fetch-site": "same-site" },
      body: { name: "from-a-sibling", definition },
    });
    expect(sameSite.status).toBe(403);
    expect(sameSite.body).toMatchObject({ error: "ops_cross_site" });
  });

  it("says which run or rejects file it does not know", async () => {
    const unknown = await call(`${ops.url}/api/runs/imports/import-nope`, { headers: AUTH });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ error: "ops_run_unknown" });
    const badQueue = await call(`${ops.url}/api/runs/uploads/import-nope`, { headers: AUTH });
    expect(badQueue.status).toBe(400);
    expect((badQueue.body as { problems: { path: string }[] }).problems[0]?.path).toBe("queue");
    const noRejects = await call(`${ops.url}/api/runs/imports/import-nope/rejects.csv`, { headers: AUTH });
    expect(noRejects.status).toBe(404);
  });

  it("refuses a run asking for both a definition and a job, or for neither", async () => {
    const both = await call(`${ops.url}/api/uploads/${uploadId}/run`, {
      headers: CONSOLE,
      body: { definition, job: "hubspot-contacts" },
    });
    expect(both.status).toBe(400);
    expect((both.body as { problems: { path: string }[] }).problems[0]?.path).toBe("definition");
    const neither = await call(`${ops.url}/api/uploads/${uploadId}/run`, {
      headers: CONSOLE,
      body: { dryRun: "yes" },
    });
    expect(neither.status).toBe(400);
    expect((neither.body as { problems: { path: string }[] }).problems.map((p) => p.path).sort()).toEqual([
      "definition",
      "dryRun",
    ]);
    const unknownJob = await call(`${ops.url}/api/uploads/${uploadId}/run`, {
      headers: CONSOLE,
      body: { job: "no-such-job" },
    });
    expect(unknownJob.status).toBe(404);
    expect(unknownJob.body).toMatchObject({ error: "ops_job_unknown" });
  });

  it("saves the mapping as a job that jobs validate accepts, and never overwrites unasked", async () => {
    const first = await call(`${ops.url}/api/jobs`, {
      headers: CONSOLE,
      body: { name: "console-contacts", definition },
    });
    expect(first.status).toBe(201);
    expect(SavedJob.safeParse(first.body).error).toBeUndefined();
    const file = path.join(jobsDir, "console-contacts.yaml");
    expect(first.body).toEqual({ name: "console-contacts", file, overwritten: false });
    // Saved under the name given, whatever the definition called itself.
    expect(definition.name).toBe("contacts");
    const read = await readJobFile(file);
    expect(read).toMatchObject({ ok: true, name: "console-contacts" });
    const listed = await call(`${ops.url}/api/jobs`, { headers: AUTH });
    expect((listed.body as { jobs: { name: string; valid: boolean }[] }).jobs).toContainEqual(
      expect.objectContaining({ name: "console-contacts", valid: true }),
    );

    const again = await call(`${ops.url}/api/jobs`, {
      headers: CONSOLE,
      body: { name: "console-contacts", definition: { ...definition, batchSize: 100 } },
    });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ error: "ops_job_exists" });
    expect(await readFile(file, "utf8")).not.toContain("batchSize: 100");
    const replaced = await call(`${ops.url}/api/jobs`, {
      headers: CONSOLE,
      body: { name: "console-contacts", definition: { ...definition, batchSize: 100 }, overwrite: true },
    });
    expect(replaced.status).toBe(200);
    expect(await readFile(file, "utf8")).toContain("batchSize: 100");
    expect((await readdir(jobsDir)).filter((f) => f.startsWith("."))).toEqual([]);
  });

  it("refuses a job to save that jobs validate would refuse, naming each path", async () => {
    const res = await call(`${ops.url}/api/jobs`, {
      headers: CONSOLE,
      body: { name: "Bad Name", definition: { ...definition, columns: [{ column: "Email", to: "fax" }] } },
    });
    expect(res.status).toBe(400);
    expect((res.body as { problems: { path: string }[] }).problems.map((p) => p.path)).toEqual(["name"]);
    const invalid = await call(`${ops.url}/api/jobs`, {
      headers: CONSOLE,
      body: { name: "bad-columns", definition: { ...definition, columns: [{ column: "Email", to: "fax" }] } },
    });
    expect(invalid.status).toBe(400);
    expect((invalid.body as { problems: { path: string }[] }).problems.map((p) => p.path)).toContain(
      "definition.columns.0.to",
    );
    await expect(stat(path.join(jobsDir, "bad-columns.yaml"))).rejects.toThrow();
  });

  it("writes no person's data to its log", () => {
    const logged = project.logText();
    expect(logged).toContain("ops console: file uploaded");
    expect(logged).toContain("ops console: import enqueued");
    for (const cell of CELLS) expect(logged.toLowerCase()).not.toContain(cell.toLowerCase());
    expect(logged).not.toContain("Favourite Colour");
  });
});

describe("old uploads", () => {
  it("are removed when the ops server starts, newer ones kept", async () => {
    const project = await withOpsProject({ auth: false });
    try {
      const root = path.join(project.dir, "data", "uploads");
      const old = path.join(root, "11111111-1111-4111-8111-111111111111");
      const recent = path.join(root, "22222222-2222-4222-8222-222222222222");
      for (const dir of [old, recent]) {
        await mkdir(dir, { recursive: true, mode: 0o700 });
        await writeFile(path.join(dir, "upload.csv"), "Email\n", { mode: 0o600 });
        await writeFile(path.join(dir, "upload.json"), "{}", { mode: 0o600 });
      }
      const eightDaysAgo = new Date(Date.now() - 8 * 24 * 3600 * 1000);
      await utimes(path.join(old, "upload.csv"), eightDaysAgo, eightDaysAgo);
      const ops = await startOpsServer({ config: project.config, logger: project.logger });
      await ops.close();
      expect(await readdir(root)).toEqual(["22222222-2222-4222-8222-222222222222"]);
      expect(project.logText()).toContain("old uploads removed");
    } finally {
      await project.cleanup();
    }
  });
});

describe("one upload, one file, under the uploads folder's quota", () => {
  let project: OpsProject;
  let ops: OpsServer;
  const QUOTA = 4096;
  const root = () => path.join(project.dir, "data", "uploads");
  /** Every file under the uploads folder, with its size: what a refusal must leave as it was. */
  const onDisk = async () => {
    const found: string[] = [];
    for (const id of await uploadsIn(project)) {
      for (const name of await readdir(path.join(root(), id))) {
        found.push(`${id}/${name}:${(await stat(path.join(root(), id, name))).size}`);
      }
    }
    return found.sort();
  };
  /** A CSV of about `bytes` bytes. */
  const csvOf = (bytes: number, who: string) => {
    const row = `${who}@example.org,Some,One,teal\n`;
    return `Email,First Name,Last Name,Favourite Colour\n${row.repeat(Math.ceil(bytes / row.length))}`;
  };
  const multipart = async (parts: { field: string; name?: string; content: string }[]) => {
    const form = new FormData();
    for (const p of parts) {
      if (p.name === undefined) form.append(p.field, p.content);
      else form.append(p.field, new Blob([p.content], { type: "text/csv" }), p.name);
    }
    const res = await fetch(`${ops.url}/api/uploads`, { method: "POST", headers: CONSOLE, body: form });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  beforeAll(async () => {
    project = await withOpsProject();
    const config = {
      ...project.config,
      ops: { ...project.config.ops, uploads: { maxBytes: 8 * 1024 * 1024, keepDays: 7, quotaBytes: QUOTA } },
    };
    ops = await startOpsServer({ config, logger: project.logger });
  });
  afterAll(async () => {
    await ops?.close();
    await project?.cleanup();
  });

  it("refuses a second file in one upload with 400, keeping neither", async () => {
    const twice = await multipart([
      { field: "file", name: "first.csv", content: csvOf(200, "first") },
      { field: "file", name: "second.csv", content: csvOf(200, "second") },
    ]);
    expect(twice.status).toBe(400);
    expect(twice.body).toMatchObject({
      error: "ops_upload_second_file",
      message: expect.stringContaining("one file per upload"),
      problems: [{ path: "file" }],
    });
    // A file in another field is a second file too, before or after the one named file.
    for (const parts of [
      [
        { field: "attachment", name: "other.csv", content: csvOf(100, "other") },
        { field: "file", name: "first.csv", content: csvOf(100, "first") },
      ],
      [
        { field: "file", name: "first.csv", content: csvOf(100, "first") },
        { field: "attachment", name: "other.csv", content: csvOf(100, "other") },
      ],
    ]) {
      const refused = await multipart(parts);
      expect(refused.status).toBe(400);
      expect(refused.body).toMatchObject({ error: "ops_upload_second_file" });
    }
    expect(await onDisk()).toEqual([]);
    // A plain field beside the file is no second file.
    const withNote = await multipart([
      { field: "note", content: "from the test" },
      { field: "file", name: "first.csv", content: csvOf(100, "first") },
    ]);
    expect(withNote.status).toBe(201);
    await rm(path.join(root(), withNote.body.uploadId as string), { recursive: true });
  });

  it("refuses an upload that would pass ops.uploads.quotaBytes with 507 saying the quota, the use and what to do, keeping nothing of it", async () => {
    const first = await multipart([{ field: "file", name: "a.csv", content: csvOf(1500, "a") }]);
    expect(first.status).toBe(201);
    const second = await multipart([{ field: "file", name: "b.csv", content: csvOf(1500, "b") }]);
    expect(second.status).toBe(201);
    const kept = await onDisk();
    expect(kept).toHaveLength(4);
    const used = kept.reduce((n, line) => n + Number(line.split(":")[1]), 0);

    const third = await multipart([{ field: "file", name: "c.csv", content: csvOf(1500, "c") }]);
    expect(third.status).toBe(507);
    expect(third.body).toMatchObject({ error: "ops_upload_quota_full" });
    const message = third.body.message as string;
    expect(message).toContain(`ops.uploads.quotaBytes, 4.0 KB (${QUOTA} bytes)`);
    expect(message).toContain(`(${used} bytes) is in use`);
    expect(message).toContain("<paths.dataDir>/uploads/");
    expect(message).toContain("raise ops.uploads.quotaBytes");
    expect(message).not.toContain(project.dir);
    expect(await onDisk()).toEqual(kept);

    // Declared far past the room left: refused before it is read.
    const huge = await multipart([{ field: "file", name: "d.csv", content: csvOf(1_500_000, "d") }]);
    expect(huge.status).toBe(507);
    expect(huge.body).toMatchObject({ error: "ops_upload_quota_full" });
    expect(await onDisk()).toEqual(kept);

    // Space freed by hand is seen by the next upload.
    await rm(path.join(root(), first.body.uploadId as string), { recursive: true });
    const again = await multipart([{ field: "file", name: "c.csv", content: csvOf(1500, "c") }]);
    expect(again.status).toBe(201);
  });
});
