import { cp, readFile } from "node:fs/promises";
import path from "node:path";
import type { Browser, Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OpsServer, startOpsServer } from "../../src/ops/index.ts";
import { type RunningWorker, startWorker } from "../../src/queue/index.ts";
import { launchChromium } from "../helpers/chromium.ts";
import { runCli } from "../helpers/cli.ts";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import { type OpsProject, PASSWORD, REPO_JOBS, SAMPLES, withOpsProject } from "./ops-fixture.ts";

/** UPDATE_SCREENSHOTS=1 writes the screenshots of docs/console.md (docs/console-*.png); CI leaves them be. */
const SCREENSHOTS = process.env.UPDATE_SCREENSHOTS === "1";
const DOCS = path.resolve(import.meta.dirname, "../../docs");

/**
 * A German CRM export as such tools write it: Windows-1252, semicolons,
 * German headers. Row 3's email is not one (rejected); the phones are
 * national numbers without a country, so the person leaves Telefon out.
 */
const GERMAN_CSV = Buffer.from(
  [
    "Anrede;Vorname;Nachname;E-Mail-Adresse;Telefon;Firma;Ort;Letzter Kontakt",
    "Frau;Käthe;Müller;kaethe.mueller@example.org;030 5550210;Beispiel GmbH;Berlin;14.03.2024",
    "Herr;Jürgen;Schäfer;juergen.schaefer(at)example.org;089 5550212;Muster AG;München;02.02.2024",
    "Frau;Özlem;Weiß;Oezlem.Weiss@Example.org;0221 5550213;Test KG;Köln;",
    "Herr;Björn;Großmann;bjoern.grossmann@example.org;040 5550214;Nord GmbH;Hamburg;30.01.2024",
    "Frau;Annegret;Vöhringer;annegret.voehringer@example.org;0711 5550215;Süd AG;Stuttgart;11.11.2023",
    "",
  ].join("\r\n"),
  "latin1",
);

async function shot(target: Page | Locator, step: string): Promise<void> {
  if (!SCREENSHOTS) return;
  const file = path.join(DOCS, `console-${step}.png`);
  if ("goto" in target) await target.screenshot({ path: file, fullPage: true });
  else await target.screenshot({ path: file });
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
    emu = await startTestEmulator();
    project = await withOpsProject({ baseUrl: emu.baseUrl, token: emu.token });
    jobsDir = path.join(project.dir, "jobs");
    await cp(REPO_JOBS, jobsDir, { recursive: true });
    const config = { ...project.config, paths: { ...project.config.paths, jobsDir } };
    worker = await startWorker({ config, logger: project.logger, schedules: false, watch: false });
    ops = await startOpsServer({ config, logger: project.logger, queues: worker.queues });
    browser = await launchChromium();
    const context = await browser.newContext({
      httpCredentials: { username: "ops", password: PASSWORD },
      viewport: { width: 1280, height: 900 },
      acceptDownloads: true,
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

  it("imports a German CRM export: suggestion, one column changed, preview, dry run, run, rejects, corrected rejects, saved job", {
    timeout: 120_000,
  }, async () => {
    // A run that fails, for the recent runs' failures by code: its file is gone.
    await worker.queues.imports.add("gone", {
      kind: "import",
      job: "hubspot-contacts",
      // Under the uploads, where the worker may read, so the run fails for want of the file.
      file: path.join(project.dir, "data", "uploads", "gone.csv"),
      origin: "dashboard",
    });

    await page.goto(`${ops.url}/`);
    await expect.poll(() => page.title()).toContain("recruit-sync console");

    // 1. The file: read as Windows-1252, each German header with its suggested target.
    await page.getByLabel(/Drop a CSV file here/).setInputFiles({
      name: "Kontakte Export.csv",
      mimeType: "text/csv",
      buffer: GERMAN_CSV,
    });
    await expect.poll(() => page.locator("#mapping").isVisible(), { timeout: 20_000 }).toBe(true);
    expect(await page.locator("#file-status").textContent()).toContain("read as windows-1252");
    expect(await page.getByLabel("Import E-Mail-Adresse as").inputValue()).toBe("email");
    expect(await page.getByLabel("Import Vorname as").inputValue()).toBe("firstName");
    expect(await page.getByLabel("Import Nachname as").inputValue()).toBe("lastName");
    expect(await page.getByLabel("Import Telefon as").inputValue()).toBe("phone");
    expect(await page.getByLabel("Import Letzter Kontakt as").inputValue()).toBe("lastContactDate");
    expect(await page.getByLabel("Import Anrede as").inputValue()).toBe("");
    expect(await page.locator("#columns").textContent()).toContain("Käthe");
    expect(await page.getByLabel("Job name (to save the mapping)").inputValue()).toBe("kontakte-export");
    // What the suggestion found in the first rows, before anything is run: the country, the identifier, the outcome.
    expect(await page.getByLabel(/Phone country/).inputValue()).toBe("DE");
    const found = await page.locator("#suggestion-outcome").textContent();
    expect(found).toContain("Phone country: DE");
    expect(found).toMatch(/Identifier: phone/);
    expect(found).toMatch(/Of the first 5 rows, \d would be imported/);
    await shot(page, "1-file");

    // 2. The suggestion accepted, one column changed: the national phone numbers are left out.
    await page.getByLabel("Study id").fill("study_1");
    await page.getByLabel("Import Telefon as").selectOption("");
    await shot(page, "2-mapping");

    // 3. Preview: four people as they would be sent, row 3 rejected for its email.
    await page.getByRole("button", { name: "Preview" }).click();
    await expect.poll(() => page.locator("#preview").isVisible(), { timeout: 15_000 }).toBe(true);
    expect(await page.locator("#preview-counts").textContent()).toContain("5rows read");
    expect(await page.locator("#preview-counts").textContent()).toContain("4would be imported");
    const sent = page.locator("#sent");
    expect(await sent.textContent()).toContain("oezlem.weiss@example.org");
    expect(await sent.textContent()).toContain("Käthe");
    expect(await sent.locator("thead").textContent()).not.toContain("phone");
    const rejectedRow = page.locator("#rejected tbody tr").first();
    expect(await rejectedRow.locator("td").nth(0).textContent()).toBe("3");
    expect(await rejectedRow.locator("td").nth(1).textContent()).toMatch(/email/i);
    expect(await rejectedRow.textContent()).toContain("juergen.schaefer(at)example.org");
    await shot(page, "3-preview");

    // 4. Dry run, through the queue: nothing sent.
    const runState = page.locator("#run-state");
    await page.getByRole("button", { name: "Dry run" }).click();
    await expect
      .poll(() => runState.textContent(), { timeout: 45_000, interval: 300 })
      .toBe("Dry run finished: nothing was sent.");
    expect(await page.locator("#run-counts").textContent()).toContain("4would be imported");
    expect(await page.locator("#run-counts").textContent()).toContain("waited on the rate budget");
    expect((await emu.snapshot()).people.filter((p) => p.email === "kaethe.mueller@example.org")).toEqual([]);
    await shot(page, "4-dry-run");

    // 5. The run, watched to its end.
    await page.getByRole("button", { name: "Run the import" }).click();
    await expect.poll(() => runState.textContent(), { timeout: 45_000, interval: 300 }).toBe("Finished.");
    expect(await page.locator("#run-counts").textContent()).toContain("4imported");
    expect(await page.locator("#run-counts").textContent()).toContain("1rejected");
    expect(await page.locator("#run-counts").textContent()).toMatch(/\dbatches/);
    await shot(page, "5-run");

    // 6. The rejects, downloaded as a person would.
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("link", { name: "Download the rejected rows (CSV)" }).click(),
    ]);
    expect(download.suggestedFilename()).toMatch(/\.rejects\.csv$/);
    const rejects = await readFile((await download.path()) as string, "utf8");
    const [header, row] = rejects.trim().split(/\r?\n/);
    // The rejects open as the export did: its semicolons (and no BOM, as the source had none).
    expect(header).toMatch(/^_source_row;_reject_reason;_reject_code;Anrede;Vorname;Nachname;E-Mail-Adresse/);
    expect(row).toContain("juergen.schaefer(at)example.org");
    expect(row).toContain("Jürgen");

    // 7. Corrected and dropped back in: checked against the mapping, then run with it.
    const corrected = rejects.replace("juergen.schaefer(at)example.org", "juergen.schaefer@example.org");
    await page.getByLabel(/Drop the corrected rejects file here/).setInputFiles({
      name: "kontakte-export.rejects.csv",
      mimeType: "text/csv",
      buffer: Buffer.from(corrected),
    });
    await expect
      .poll(() => page.locator("#mapping-status").textContent(), { timeout: 15_000 })
      .toContain("has the columns the mapping reads: 1 of its 1 rows would be imported, 0 rejected again");
    await shot(page, "6-corrected");
    const firstRun = await page.locator("#run-id").textContent();
    await page.getByRole("button", { name: "Run the import" }).click();
    await expect.poll(() => page.locator("#run-id").textContent()).not.toBe(firstRun);
    await expect.poll(() => runState.textContent(), { timeout: 45_000, interval: 300 }).toBe("Finished.");
    expect(await page.locator("#run-counts").textContent()).toContain("1imported");
    expect(await page.locator("#run-counts").textContent()).toContain("0rejected");
    const people = (await emu.snapshot()).people.map((p) => p.email);
    expect(people).toContain("juergen.schaefer@example.org");
    expect(people).toContain("kaethe.mueller@example.org");

    // 8. Saved as a job that `recruit-sync jobs validate` accepts.
    await page.getByRole("button", { name: "Save as job" }).click();
    const saved = path.join(jobsDir, "kontakte-export.yaml");
    await expect
      .poll(() => page.locator("#mapping-status").textContent(), { timeout: 15_000 })
      .toContain(saved);
    const validate = await runCli(["jobs", "validate", "--dir", jobsDir], { env: { NODE_ENV: "" } });
    expect(validate.code).toBe(0);
    expect(validate.stdout).toMatch(/^ok +.*kontakte-export\.yaml$/m);
    const yaml = await readFile(saved, "utf8");
    expect(yaml).toContain("column: E-Mail-Adresse");
    expect(yaml).not.toContain("column: Telefon");
    await shot(page, "7-saved");

    // A second save without "replace" is refused, and the page says why.
    await page.getByRole("button", { name: "Save as job" }).click();
    await expect
      .poll(() => page.getByRole("alert").textContent())
      .toContain('tick "replace a job of that name"');

    // 9. Both queues' recent runs with their reports, failures by code, and the budget.
    const queues = page.locator("#queues");
    await expect
      .poll(() => page.locator("#failure-codes").textContent(), { timeout: 20_000 })
      .toContain("file_unreadable: 1 run");
    await expect
      .poll(() => page.locator("#recent-runs").textContent(), { timeout: 20_000 })
      .toContain("1 rows read, 1 imported, 0 rejected");
    const recent = await page.locator("#recent-runs").textContent();
    expect(recent).toContain("5 rows read, 4 imported, 1 rejected");
    expect(recent).toContain("kontakte-export (dry run)");
    expect(recent).toContain("failed: file_unreadable");
    expect(await page.locator("#budget").textContent()).toMatch(
      /^\d+ of 100000 requests left in this window; it resets at /,
    );
    expect(await page.locator("#active-runs").textContent()).toContain("Nothing is running or waiting.");
    await shot(queues, "8-runs");
  });

  it("can be worked with the keyboard alone: the file box, each column's menu, the buttons", async () => {
    await page.goto(`${ops.url}/`);
    // The header's two links (run history, dashboard), then the file box.
    await page.keyboard.press("Tab");
    await page.keyboard.press("Tab");
    await page.keyboard.press("Tab");
    expect(await page.evaluate("document.activeElement?.id")).toBe("file");
    await page.locator("#file").setInputFiles({
      name: "Kontakte Export.csv",
      mimeType: "text/csv",
      buffer: GERMAN_CSV,
    });
    await expect.poll(() => page.locator("#mapping").isVisible(), { timeout: 20_000 }).toBe(true);
    await page.getByLabel("Import Telefon as").focus();
    await page.keyboard.press("Home");
    expect(await page.getByLabel("Import Telefon as").inputValue()).toBe("");
    await page.getByLabel("Study id").focus();
    await page.keyboard.type("study_1");
    await page.getByRole("button", { name: "Preview" }).focus();
    await page.keyboard.press("Enter");
    await expect.poll(() => page.locator("#preview").isVisible(), { timeout: 15_000 }).toBe(true);
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
    await expect.poll(() => problem.textContent(), { timeout: 15_000 }).toContain("not a text CSV file");
    expect(await page.locator("#mapping").isVisible()).toBe(false);
  });

  it("reads national phone numbers in the phone country set on the page", { timeout: 60_000 }, async () => {
    await page.goto(`${ops.url}/`);
    await page.getByLabel(/Drop a CSV file here/).setInputFiles({
      name: "Kontakte Export.csv",
      mimeType: "text/csv",
      buffer: GERMAN_CSV,
    });
    await expect.poll(() => page.locator("#mapping").isVisible(), { timeout: 20_000 }).toBe(true);
    await page.getByLabel("Study id").fill("study_1");
    await page.getByLabel("Import Telefon as").selectOption("phone");
    await page.getByLabel("Identify people by").selectOption("email");
    // Without a country the national numbers cannot be read: the people come without them.
    await page.getByLabel(/Phone country/).fill("");
    await page.getByRole("button", { name: "Preview" }).click();
    await expect.poll(() => page.locator("#preview").isVisible(), { timeout: 15_000 }).toBe(true);
    await expect
      .poll(() => page.locator("#preview-counts").textContent(), { timeout: 15_000 })
      .toContain("4would be imported");
    expect(await page.locator("#sent").textContent()).not.toContain("+49305550210");
    await page.getByLabel(/Phone country/).fill("de");
    await page.getByRole("button", { name: "Preview" }).click();
    await expect
      .poll(() => page.locator("#sent").textContent(), { timeout: 15_000 })
      .toContain("+49305550210");
    expect(await page.locator("#preview-counts").textContent()).toContain("4would be imported");
  });

  it("shows a refused run's rejects as a download, and its bar stopped in red", {
    timeout: 60_000,
  }, async () => {
    const rows = ["Email,First Name"];
    for (let i = 0; i < 120; i++) rows.push(i < 20 ? `p${i}@example.org,P${i}` : `nobody-${i},N${i}`);
    await page.goto(`${ops.url}/`);
    await page.getByLabel(/Drop a CSV file here/).setInputFiles({
      name: "mostly-wrong.csv",
      mimeType: "text/csv",
      buffer: Buffer.from(`${rows.join("\n")}\n`),
    });
    await expect.poll(() => page.locator("#mapping").isVisible(), { timeout: 20_000 }).toBe(true);
    await page.getByLabel("Study id").fill("study_1");
    await page.getByRole("button", { name: "Run the import" }).click();
    await expect
      .poll(() => page.locator("#run-state").textContent(), { timeout: 45_000, interval: 300 })
      .toBe("Failed.");
    const failure = await page.locator("#run-failure").textContent();
    expect(failure).toContain("100 of the first 120 rows were rejected");
    expect(failure).not.toContain(project.dir);
    expect(await page.getByRole("link", { name: "Download the rejected rows (CSV)" }).isVisible()).toBe(true);
    const bar = page.locator("#run-progress");
    expect(await bar.getAttribute("class")).toContain("failed");
    expect(
      await bar.evaluate(
        (b) => (b as unknown as { value: number; max: number }).value < (b as unknown as { max: number }).max,
      ),
    ).toBe(true);
  });
});
