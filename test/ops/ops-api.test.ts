import { copyFile, mkdir } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError } from "../../src/errors/index.ts";
import { type OpsServer, startOpsServer } from "../../src/ops/index.ts";
import { openQueues, type Queues, queueConnection } from "../../src/queue/index.ts";
import { AUTH, basic, call, type OpsProject, PASSWORD, SAMPLES, withOpsProject } from "./ops-fixture.ts";

describe("the ops server with basic auth on (the default)", () => {
  let project: OpsProject;
  let ops: OpsServer;
  let queues: Queues;
  let connection: ReturnType<typeof queueConnection>;
  let sample: string;

  beforeAll(async () => {
    project = await withOpsProject();
    ops = await startOpsServer({ config: project.config, logger: project.logger });
    connection = queueConnection(project.config);
    queues = openQueues(project.config, connection);
    await mkdir(project.incoming, { recursive: true });
    sample = path.join(project.incoming, "hubspot-contacts.csv");
    await copyFile(path.join(SAMPLES, "hubspot-contacts.csv"), sample);
  });
  afterAll(async () => {
    await ops?.close();
    await queues?.close();
    connection?.disconnect();
    await project?.cleanup();
  });

  it("answers /healthz without credentials", async () => {
    const res = await call(`${ops.url}/healthz`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: "ok" });
  });

  it.each(["/readyz", "/metrics", "/api/jobs", "/api/runs", "/api/governor", "/ui/", "/ui/api/queues"])(
    "asks for credentials on %s",
    async (route) => {
      const res = await call(`${ops.url}${route}`);
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toMatch(/^Basic realm="recruit-sync ops"/);
    },
  );

  it("refuses a wrong password with 401 and logs the attempt without the password", async () => {
    const res = await call(`${ops.url}/api/jobs`, { headers: basic("ops", "hunter2-wrong") });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: "ops_unauthorized", message: "wrong user or password" });
    const logged = project.logText();
    expect(logged).toContain("wrong user or password");
    expect(logged).toContain('"user":"ops"');
    expect(logged).not.toContain("hunter2-wrong");
    expect(logged).not.toContain(PASSWORD);
  });

  it("refuses a wrong user with the right password", async () => {
    const res = await call(`${ops.url}/api/jobs`, { headers: basic("admin", PASSWORD) });
    expect(res.status).toBe(401);
  });

  it("lets the right user and password through to every route", async () => {
    for (const route of ["/readyz", "/metrics", "/api/jobs", "/api/runs", "/api/governor", "/ui/"]) {
      const res = await call(`${ops.url}${route}`, { headers: AUTH });
      expect(res.status, route).toBe(200);
    }
  });

  it("serves the console at /, the dashboard staying at /ui/", async () => {
    const res = await call(`${ops.url}/`, { headers: AUTH });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
  });

  it("lists the job definitions of jobs/", async () => {
    const res = await call(`${ops.url}/api/jobs`, { headers: AUTH });
    const jobs = (res.body as { jobs: { name: string; kind: string; valid: boolean }[] }).jobs;
    expect(jobs).toContainEqual(
      expect.objectContaining({ name: "nightly-export", kind: "export", valid: true }),
    );
    expect(jobs).toContainEqual(
      expect.objectContaining({ name: "hubspot-contacts", kind: "import", valid: true }),
    );
  });

  it("answers an unknown job name with 404 pointing to `recruit-sync jobs list`", async () => {
    const res = await call(`${ops.url}/api/jobs/no-such-job/run`, { headers: AUTH, body: {} });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({
      error: "ops_job_unknown",
      message: expect.stringContaining("no job definition named no-such-job"),
    });
    expect((res.body as { message: string }).message).toContain("recruit-sync jobs list");
  });

  it("refuses overrides that do not parse with 400 naming each path", async () => {
    const res = await call(`${ops.url}/api/jobs/nightly-export/run`, {
      headers: AUTH,
      body: { resources: ["participants", "bogus"], file: "relative.csv", colour: "red" },
    });
    expect(res.status).toBe(400);
    const body = res.body as { error: string; problems: { path: string; message: string }[] };
    expect(body.error).toBe("ops_invalid_overrides");
    expect(body.problems.map((p) => p.path).sort()).toEqual(["(body)", "file", "resources.1"]);
    expect(body.problems.find((p) => p.path === "(body)")?.message).toBe("unknown override colour");
  });

  it("refuses an override that does not apply to the job's kind", async () => {
    const res = await call(`${ops.url}/api/jobs/nightly-export/run`, {
      headers: AUTH,
      body: { file: sample, dryRun: true },
    });
    expect(res.status).toBe(400);
    expect((res.body as { problems: unknown[] }).problems).toEqual([
      { path: "file", message: "does not apply to a job of kind export" },
      { path: "dryRun", message: "does not apply to a job of kind export" },
    ]);
  });

  it("refuses an import without a file, and one whose file does not exist", async () => {
    const none = await call(`${ops.url}/api/jobs/hubspot-contacts/run`, { headers: AUTH, body: {} });
    expect(none.status).toBe(400);
    expect((none.body as { problems: { path: string }[] }).problems[0]?.path).toBe("file");
    const missing = await call(`${ops.url}/api/jobs/hubspot-contacts/run`, {
      headers: AUTH,
      body: { file: path.join(project.incoming, "absent.csv") },
    });
    expect(missing.status).toBe(400);
    expect((missing.body as { problems: { path: string; message: string }[] }).problems).toEqual([
      { path: "file", message: expect.stringContaining("no such file") },
    ]);
  });

  it("refuses a body that is not JSON", async () => {
    const res = await fetch(`${ops.url}/api/jobs/nightly-export/run`, {
      method: "POST",
      headers: { ...AUTH, "content-type": "application/json" },
      body: "{not json",
    });
    expect(res.status).toBe(400);
  });

  it("triggers an export with its overrides, origin ops-api", async () => {
    const res = await call(`${ops.url}/api/jobs/nightly-export/run`, {
      headers: AUTH,
      body: { resources: ["segments", "participants"], study: "study_1" },
    });
    expect(res.status).toBe(202);
    const triggered = res.body as { jobId: string; queue: string; job: string; kind: string };
    expect(triggered).toMatchObject({ queue: "exports", job: "nightly-export", kind: "export" });
    const job = await queues.exports.getJob(triggered.jobId);
    expect(job?.data).toEqual({
      kind: "export",
      job: "nightly-export",
      resources: ["segments", "participants"],
      studies: ["study_1"],
      origin: "ops-api",
    });
  });

  it("triggers an import of a file with its study, and says when the same file is already queued", async () => {
    const body = { file: sample, study: "study_2", dryRun: true };
    const first = await call(`${ops.url}/api/jobs/hubspot-contacts/run`, { headers: AUTH, body });
    expect(first.status).toBe(202);
    const triggered = first.body as { jobId: string; queue: string; duplicate: boolean };
    expect(triggered).toMatchObject({ queue: "imports", duplicate: false });
    const job = await queues.imports.getJob(triggered.jobId);
    expect(job?.data).toMatchObject({
      kind: "import",
      job: "hubspot-contacts",
      file: sample,
      study: "study_2",
      dryRun: true,
      origin: "ops-api",
    });
    const again = await call(`${ops.url}/api/jobs/hubspot-contacts/run`, { headers: AUTH, body });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ jobId: triggered.jobId, duplicate: true, state: "prioritized" });
  });

  it("shows queued jobs in the governor's state, and no budget without a token", async () => {
    const res = await call(`${ops.url}/api/governor`, { headers: AUTH });
    expect(res.status).toBe(200);
    const body = res.body as {
      budget: unknown;
      note: string;
      queues: Record<string, { counts: Record<string, number>; waiting: { data: { origin: string } }[] }>;
    };
    expect(body.budget).toBeNull();
    expect(body.note).toContain("RECRUIT_SYNC_API_TOKEN");
    expect(body.queues.exports?.counts.prioritized).toBe(1);
    expect(body.queues.imports?.waiting.map((j) => j.data.origin)).toEqual(["ops-api"]);
  });

  it("validates the runs query", async () => {
    const res = await call(`${ops.url}/api/runs?limit=0&state=stuck`, { headers: AUTH });
    expect(res.status).toBe(400);
    expect((res.body as { problems: { path: string }[] }).problems.map((p) => p.path).sort()).toEqual([
      "limit",
      "state",
    ]);
  });

  it("serves each queue's job-data schema for the dashboard's form, prefilled from jobs/", async () => {
    const res = await call(`${ops.url}/ui/api/queues/exports/job-data-schema`, { headers: AUTH });
    expect(res.status).toBe(200);
    const schema = res.body as {
      required: string[];
      examples: unknown[];
      properties: Record<string, unknown>;
    };
    expect(schema.required).toEqual(["kind"]);
    expect(schema.properties.resources).toBeDefined();
    expect(schema.examples[0]).toEqual({ kind: "export", job: "nightly-export", origin: "dashboard" });
    const imports = await call(`${ops.url}/ui/api/queues/imports/job-data-schema`, { headers: AUTH });
    expect((imports.body as { required: string[] }).required).toEqual(["kind", "file"]);
  });

  it("refuses a job added from the dashboard whose data the worker would refuse, naming each problem", async () => {
    const res = await call(`${ops.url}/ui/api/queues/exports/add`, {
      headers: AUTH,
      body: { name: "export", data: { kind: "export", resources: ["nope"], extra: 1 }, options: {} },
    });
    expect(res.status).toBe(400);
    expect(res.text).toContain("resources.0");
    expect(res.text).toContain("Unrecognized key");
    const unknownJob = await call(`${ops.url}/ui/api/queues/exports/add`, {
      headers: AUTH,
      body: { name: "export", data: { kind: "export", job: "no-such-job" }, options: {} },
    });
    expect(unknownJob.status).toBe(400);
    expect(unknownJob.text).toContain("recruit-sync jobs list");
    const missingFile = await call(`${ops.url}/ui/api/queues/imports/add`, {
      headers: AUTH,
      body: {
        name: "import",
        data: { kind: "import", job: "hubspot-contacts", file: "/nowhere/x.csv" },
        options: {},
      },
    });
    expect(missingFile.status).toBe(400);
    expect(missingFile.text).toContain("refused /nowhere/x.csv: a queued import reads only files under");
    const absent = await call(`${ops.url}/ui/api/queues/imports/add`, {
      headers: AUTH,
      body: {
        name: "import",
        data: { kind: "import", job: "hubspot-contacts", file: path.join(project.incoming, "x.csv") },
        options: {},
      },
    });
    expect(absent.status).toBe(400);
    expect(absent.text).toContain("cannot read");
    const elsewhere = await call(`${ops.url}/ui/api/queues/exports/add`, {
      headers: AUTH,
      body: {
        name: "export",
        data: { kind: "export", job: "nightly-export", warehouse: "file:/tmp/anyone-s-folder" },
        options: {},
      },
    });
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.text).toContain("named by neither the job definition nor the configuration");
  });

  it("refuses, from another site, every request that changes something: runs, dashboard jobs", async () => {
    const attempts = [
      { url: `${ops.url}/api/jobs/nightly-export/run`, body: {} },
      {
        url: `${ops.url}/ui/api/queues/exports/add`,
        body: { name: "export", data: { kind: "export", job: "nightly-export" }, options: {} },
      },
    ];
    const queuedBefore = await queues.exports.getJobCounts("waiting", "prioritized");
    for (const { url, body } of attempts) {
      const foreign: Record<string, string>[] = [
        { origin: "https://elsewhere.example" },
        { "sec-fetch-site": "cross-site" },
      ];
      for (const headers of foreign) {
        const res = await call(url, { headers: { ...AUTH, ...headers }, body });
        expect(res.status, url).toBe(403);
        expect(res.body).toMatchObject({ error: "ops_cross_site" });
      }
    }
    expect(await queues.exports.getJobCounts("waiting", "prioritized")).toEqual(queuedBefore);
    // Its own origin, as the dashboard's page sends it, is fine.
    const own = await call(`${ops.url}/api/jobs/nightly-export/run`, {
      headers: { ...AUTH, origin: ops.url, "sec-fetch-site": "same-origin" },
      body: {},
    });
    expect(own.status).toBe(202);
  });

  it("adds a job from the dashboard when its data is what the worker takes", async () => {
    const queuedBefore = await queues.exports.getJobCounts("waiting", "prioritized");
    const res = await call(`${ops.url}/ui/api/queues/exports/add`, {
      headers: AUTH,
      body: {
        name: "export",
        data: { kind: "export", job: "nightly-export", resources: ["segments"] },
        options: {},
      },
    });
    expect(res.status).toBe(200);
    const queuedAfter = await queues.exports.getJobCounts("waiting", "prioritized");
    expect((queuedAfter.waiting ?? 0) + (queuedAfter.prioritized ?? 0)).toBe(
      (queuedBefore.waiting ?? 0) + (queuedBefore.prioritized ?? 0) + 1,
    );
  });
});

describe("the ops server with basic auth off", () => {
  let project: OpsProject;
  let ops: OpsServer;

  beforeAll(async () => {
    project = await withOpsProject({ auth: false });
    ops = await startOpsServer({ config: project.config, logger: project.logger });
  });
  afterAll(async () => {
    await ops?.close();
    await project?.cleanup();
  });

  it("answers every route without credentials", async () => {
    for (const route of [
      "/healthz",
      "/readyz",
      "/metrics",
      "/api/jobs",
      "/api/runs",
      "/api/governor",
      "/ui/",
    ]) {
      const res = await call(`${ops.url}${route}`);
      expect(res.status, route).toBe(200);
    }
  });

  it("still answers unknown job names with 404", async () => {
    const res = await call(`${ops.url}/api/jobs/nope/run`, { body: {} });
    expect(res.status).toBe(404);
  });
});

describe("starting the ops server", () => {
  it("refuses to start with auth on and no password, saying which variable to set", async () => {
    const project = await withOpsProject();
    try {
      const config = { ...project.config, ops: { ...project.config.ops, password: undefined } };
      const started = startOpsServer({ config, logger: project.logger });
      await expect(started).rejects.toThrow(ConfigError);
      await expect(started).rejects.toThrow(/RECRUIT_SYNC_OPS_PASSWORD/);
    } finally {
      await project.cleanup();
    }
  });

  it("says which port is taken instead of a raw EADDRINUSE", async () => {
    const project = await withOpsProject({ auth: false });
    const first = await startOpsServer({ config: project.config, logger: project.logger });
    try {
      const port = Number(new URL(first.url).port);
      await expect(startOpsServer({ config: project.config, logger: project.logger, port })).rejects.toThrow(
        /cannot listen on 127\.0\.0\.1:\d+ \(EADDRINUSE\): give --port/,
      );
    } finally {
      await first.close();
      await project.cleanup();
    }
  });
});
