import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OpsServer, startOpsServer } from "../../src/ops/index.ts";
import { followJob, type RunningWorker, startWorker } from "../../src/queue/index.ts";
import { launchChromium } from "../helpers/chromium.ts";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import { AUTH, call, type OpsProject, PASSWORD, withOpsProject } from "./ops-fixture.ts";

const SCREENSHOT = process.env.RECRUIT_SYNC_DASHBOARD_SCREENSHOT;

describe("the dashboard in a browser", () => {
  let emu: TestEmulator;
  let project: OpsProject;
  let worker: RunningWorker;
  let ops: OpsServer;
  let browser: Browser;
  let page: Page;
  let failedJobId: string;
  /** What the browser reported of the page's Content-Security-Policy: anything it blocked. */
  const blocked: string[] = [];

  beforeAll(async () => {
    emu = await startTestEmulator();
    project = await withOpsProject({ baseUrl: emu.baseUrl, token: emu.token });
    worker = await startWorker({
      config: project.config,
      logger: project.logger,
      schedules: false,
      watch: false,
    });
    ops = await startOpsServer({ config: project.config, logger: project.logger, queues: worker.queues });

    // An import that fails for good: the file lacks the columns its definition maps.
    await mkdir(project.incoming, { recursive: true });
    const file = path.join(project.incoming, "no-email.csv");
    await writeFile(file, "Name,City\nAda,London\n");
    const res = await call(`${ops.url}/api/jobs/hubspot-contacts/run`, { headers: AUTH, body: { file } });
    failedJobId = (res.body as { jobId: string }).jobId;
    expect((await followJob(worker.queues.imports, failedJobId, () => {})).state).toBe("failed");

    browser = await launchChromium();
    const context = await browser.newContext({
      httpCredentials: { username: "ops", password: PASSWORD },
      viewport: { width: 1280, height: 800 },
    });
    page = await context.newPage();
    page.on("console", (m) => {
      if (/Content Security Policy/i.test(m.text())) blocked.push(m.text());
    });
  });
  afterAll(async () => {
    await browser?.close();
    await ops?.close();
    await worker?.stop();
    await emu?.close();
    await project?.cleanup();
  });

  it("refuses the dashboard to a browser without credentials", async () => {
    const anonymous = await browser.newContext();
    try {
      const res = await anonymous.request.get(ops.dashboardUrl);
      expect(res.status()).toBe(401);
      expect(res.headers()["www-authenticate"]).toMatch(/^Basic /);
    } finally {
      await anonymous.close();
    }
  });

  it("sends the dashboard, its scripts and its API with a Content-Security-Policy and refuses framing", async () => {
    const pageRes = await call(ops.dashboardUrl, { headers: AUTH });
    expect(pageRes.status).toBe(200);
    const csp = pageRes.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain("unsafe-eval");
    expect(csp).not.toMatch(/script-src[^;]*unsafe-inline/);
    expect(pageRes.headers.get("x-frame-options")).toBe("DENY");
    expect(pageRes.headers.get("x-content-type-options")).toBe("nosniff");
    const script = /src="(static\/js\/main\.[^"]+\.js)"/.exec(pageRes.text)?.[1];
    expect(script).toBeDefined();
    for (const url of [`${ops.dashboardUrl}${script}`, `${ops.dashboardUrl}api/queues`]) {
      const res = await call(url, { headers: AUTH });
      expect(res.status, url).toBe(200);
      expect(res.headers.get("x-frame-options"), url).toBe("DENY");
      expect(res.headers.get("content-security-policy"), url).toBe(csp);
    }
  });

  it("adds an export job from the form and watches it complete", { timeout: 90_000 }, async () => {
    await page.goto(`${ops.dashboardUrl}queue/exports`);
    await page.locator("button[aria-haspopup=menu]").last().click();
    await page.getByRole("menuitem", { name: "Add job" }).click();
    const dialog = page.getByRole("dialog");
    // The form opens on a job of jobs/, from the queue's job-data schema.
    await expect
      .poll(() => dialog.locator(".cm-content").first().textContent())
      .toContain('"nightly-export"');

    await dialog.getByLabel("Job name").fill("segments-from-the-dashboard");
    const data = dialog.locator(".cm-content").first();
    await data.click();
    await page.keyboard.press("ControlOrMeta+A");
    await page.keyboard.insertText(
      JSON.stringify({ kind: "export", job: "nightly-export", resources: ["segments"], origin: "dashboard" }),
    );
    await dialog.getByRole("button", { name: "Add" }).click();
    await expect.poll(() => dialog.isVisible()).toBe(false);

    // The dashboard polls the queues itself: the job shows up among the completed once the worker is done.
    await page.goto(`${ops.dashboardUrl}queue/exports?status=completed`);
    const card = page.getByText("segments-from-the-dashboard").first();
    await expect.poll(() => card.isVisible(), { timeout: 45_000, interval: 500 }).toBe(true);
    if (SCREENSHOT) {
      await mkdir(path.dirname(SCREENSHOT), { recursive: true });
      await page.screenshot({ path: SCREENSHOT });
    }
    const [job] = await worker.queues.exports.getJobs(["completed"]);
    if (!job) throw new Error("no completed export job");
    expect(job.name).toBe("segments-from-the-dashboard");
    expect(job.data).toMatchObject({ resources: ["segments"], origin: "dashboard" });
    const report = job.returnvalue as { resources: { segments: { rows: number } } };
    expect(report.resources.segments.rows).toBeGreaterThan(0);
  });

  it("opens a failed import and shows why it failed", async () => {
    await page.goto(`${ops.dashboardUrl}queue/imports?status=failed`);
    // The job's card: the innermost element holding both its id and its tabs.
    const card = page
      .locator("div")
      .filter({ has: page.getByText(failedJobId) })
      .filter({ has: page.getByRole("tab", { name: "Error" }) })
      .last();
    await card.getByRole("tab", { name: "Data" }).click();
    await expect.poll(() => card.getByText('"ops-api"').first().isVisible(), { timeout: 15_000 }).toBe(true);
    await card.getByRole("tab", { name: "Error" }).click();
    await expect
      .poll(
        () =>
          card
            .getByText(/file_missing_column: .*"Record ID"/)
            .first()
            .isVisible(),
        { timeout: 15_000 },
      )
      .toBe(true);
  });

  it("runs under that policy: the browser blocked nothing but bull-board's Google Fonts stylesheet", () => {
    // The pages above rendered, took a job from the form and showed a failure: the scripts and API calls ran.
    // The one thing left out is reported, so the browser's reports are being heard.
    expect(blocked.some((m) => m.includes("fonts.googleapis.com"))).toBe(true);
    const others = blocked.filter((m) => !m.includes("fonts.googleapis.com"));
    expect(others).toEqual([]);
  });
});
