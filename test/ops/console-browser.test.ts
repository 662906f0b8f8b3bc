import { existsSync } from "node:fs";
import { cp, mkdir, readFile } from "node:fs/promises";
import path from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readJobFile } from "../../src/config/index.ts";
import { type OpsServer, startOpsServer } from "../../src/ops/index.ts";
import { type RunningWorker, startWorker } from "../../src/queue/index.ts";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import { type OpsProject, PASSWORD, REPO_JOBS, SAMPLES, withOpsProject } from "./ops-fixture.ts";

/** Debian's Chromium, as dashboard-browser.test.ts launches it: the test downloads no browser. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
/** Where to write the screenshot of docs/console.md (docs/console.png). */
const SCREENSHOT = process.env.RECRUIT_SYNC_CONSOLE_SCREENSHOT;

const CSV = [
  "Email,First Name,Last Name,Favourite Colour",
  "Quillon.Vandermeer@Example.org,Quillon,Vandermeer,teal",
  "ysolde.brackwater@example.org,Ysolde,Brackwater,ochre",
  "not-an-email-zorbit,Zorbit,Klausewitz,mauve",
  "ottoline.fairweather@example.org,Ottoline,Fairweather,umber",
  "",
].join("\n");

async function shot(page: Page): Promise<void> {
  if (!SCREENSHOT) return;
  await mkdir(path.dirname(SCREENSHOT), { recursive: true });
  await page.screenshot({ path: SCREENSHOT, fullPage: true });
}

describe("the console in a browser", () => {
  let emu: TestEmulator;
  let project: OpsProject;
  let worker: RunningWorker;
  let ops: OpsServer;
  let browser: Browser;
  let page: Page;
  let jobsDir: string;

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) {
      throw new Error(`no Chromium at ${CHROMIUM}: apt-get install -y chromium (or set CHROMIUM_PATH)`);
    }
    emu = await startTestEmulator();
    project = await withOpsProject({ baseUrl: emu.baseUrl, token: emu.token });
    jobsDir = path.join(project.dir, "jobs");
    await cp(REPO_JOBS, jobsDir, { recursive: true });
    const config = { ...project.config, paths: { ...project.config.paths, jobsDir } };
    worker = await startWorker({ config, logger: project.logger, schedules: false, watch: false });
    ops = await startOpsServer({ config, logger: project.logger, queues: worker.queues });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
      ],
    });
    const context = await browser.newContext({
      httpCredentials: { username: "ops", password: PASSWORD },
      viewport: { width: 1280, height: 900 },
    });
    page = await context.newPage();
  });
  afterAll(async () => {
    await browser?.close();
    await ops?.close();
    await worker?.stop();
    await emu?.close();
    await project?.cleanup();
  });

  it("uploads a CSV, shows the suggested mapping, previews, runs it to the end and saves the job", {
    timeout: 90_000,
  }, async () => {
    await page.goto(`${ops.url}/`);
    await expect.poll(() => page.title()).toContain("recruit-sync console");
    await page.getByLabel(/Drop a CSV file here/).setInputFiles({
      name: "spring-panel.csv",
      mimeType: "text/csv",
      buffer: Buffer.from(CSV),
    });

    // The mapping: each column with its suggested target; the person picks the study.
    const mapping = page.locator("#mapping");
    await expect.poll(() => mapping.isVisible()).toBe(true);
    expect(await page.getByLabel("Import Email as").inputValue()).toBe("email");
    expect(await page.getByLabel("Import First Name as").inputValue()).toBe("firstName");
    expect(await page.getByLabel("Import Favourite Colour as").inputValue()).toBe("");
    expect(await page.getByLabel("Job name (to save the mapping)").inputValue()).toBe("spring-panel");
    await page.getByLabel("Study id").fill("study_1");
    // Changed by hand: the last name is left out.
    await page.getByLabel("Import Last Name as").selectOption("");

    await page.getByRole("button", { name: "Preview" }).click();
    const preview = page.locator("#preview");
    await expect.poll(() => preview.isVisible(), { timeout: 15_000 }).toBe(true);
    const sent = page.locator("#sent");
    expect(await sent.textContent()).toContain("quillon.vandermeer@example.org");
    expect(await sent.locator("thead").textContent()).not.toContain("lastName");
    const rejected = page.locator("#rejected");
    const rejectedRow = rejected.locator("tbody tr").first();
    expect(await rejectedRow.textContent()).toContain("not-an-email-zorbit");
    expect(await rejectedRow.locator("td").nth(0).textContent()).toBe("4");
    expect(await rejectedRow.locator("td").nth(1).textContent()).toMatch(/email/i);

    await page.getByRole("button", { name: "Run the import" }).click();
    const runState = page.locator("#run-state");
    await expect.poll(() => runState.textContent(), { timeout: 45_000, interval: 500 }).toBe("Finished.");
    expect(await page.locator("#run-counts").textContent()).toMatch(/3imported/);
    const link = page.getByRole("link", { name: "Download the rejected rows (CSV)" });
    const rejects = await page.request.get(new URL((await link.getAttribute("href")) ?? "", page.url()).href);
    expect(rejects.status()).toBe(200);
    expect(await rejects.text()).toContain("not-an-email-zorbit");
    await shot(page);

    await page.getByRole("button", { name: "Save as job" }).click();
    await expect
      .poll(() => page.locator("#mapping-status").textContent())
      .toContain(path.join(jobsDir, "spring-panel.yaml"));
    const saved = await readJobFile(path.join(jobsDir, "spring-panel.yaml"));
    expect(saved).toMatchObject({ ok: true, name: "spring-panel" });
    expect(await readFile(path.join(jobsDir, "spring-panel.yaml"), "utf8")).not.toContain("Last Name");

    // A second save without "replace" is refused, and the page says why.
    await page.getByRole("button", { name: "Save as job" }).click();
    const problem = page.getByRole("alert");
    await expect.poll(() => problem.textContent()).toContain('tick "replace a job of that name"');
  });

  it("says in one line why a file that is not a CSV is refused", async () => {
    await page.goto(`${ops.url}/`);
    const picture = await readFile(path.join(SAMPLES, "..", "docs", "dashboard.png"));
    await page.getByLabel(/Drop a CSV file here/).setInputFiles({
      name: "dashboard.png",
      mimeType: "image/png",
      buffer: picture,
    });
    const problem = page.getByRole("alert");
    await expect.poll(() => problem.textContent()).toContain("not a text CSV file");
    expect(await page.locator("#mapping").isVisible()).toBe(false);
  });
});
