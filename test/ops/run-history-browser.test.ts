/**
 * The console's run history page in a real browser: the runs of each job,
 * their alert states and the sparklines, under the page's CSP ('self' scripts only).
 */
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OpsServer, startOpsServer } from "../../src/ops/index.ts";
import {
  type AlertsHarness,
  type AlertsProject,
  alertsHarness,
  alertsProject,
} from "../alerts/alerts-fixture.ts";
import { startWebhookReceiver, type WebhookReceiver } from "../alerts/receivers.ts";
import { launchChromium } from "../helpers/chromium.ts";
import { PASSWORD } from "./ops-fixture.ts";

/** UPDATE_SCREENSHOTS=1 writes docs/console-9-run-history.png; CI leaves it be. */
const SCREENSHOTS = process.env.UPDATE_SCREENSHOTS === "1";
const DOCS = path.resolve(import.meta.dirname, "../../docs");

describe("the run history page in a browser", () => {
  let webhook: WebhookReceiver;
  let project: AlertsProject;
  let h: AlertsHarness;
  let ops: OpsServer;
  let browser: Browser;
  let page: Page;
  const problems: string[] = [];

  beforeAll(async () => {
    webhook = await startWebhookReceiver();
    project = await alertsProject({ webhook, rules: { rejectedRows: { share: 0.1 } } });
    h = alertsHarness(project);
    // A week of a CRM import: durations that vary, one bad file, then a failure.
    const week = [
      { rowsRead: 1200, rejected: 8, sleepMs: 900, budgetWaitMs: 0 },
      { rowsRead: 1350, rejected: 11, sleepMs: 1300, budgetWaitMs: 600 },
      { rowsRead: 1280, rejected: 9, sleepMs: 1000, budgetWaitMs: 0 },
      { rowsRead: 1410, rejected: 212, sleepMs: 2100, budgetWaitMs: 1400 },
      { rowsRead: 1390, rejected: 10, sleepMs: 1100, budgetWaitMs: 300 },
      { fail: "unauthorized", sleepMs: 200 },
    ];
    for (const run of week) await h.finishImport("crm-contacts", run);
    for (const run of [
      { rowsRead: 80, rejected: 0, sleepMs: 150 },
      { rowsRead: 95, rejected: 40, sleepMs: 200 },
    ])
      await h.finishImport("mailchimp-audience", run);
    await h.evaluate();
    await webhook.waitFor(2);
    const config = {
      ...project.config,
      ops: { ...project.config.ops, port: 0, auth: true, password: PASSWORD },
    };
    ops = await startOpsServer({ config, logger: project.logger, queues: h.queues, alerts: false });
    browser = await launchChromium();
    const context = await browser.newContext({
      httpCredentials: { username: "ops", password: PASSWORD },
      viewport: { width: 1280, height: 900 },
    });
    page = await context.newPage();
    // The browser asks for /favicon.ico on its own; anything else the page loads must be there.
    page.on("response", (r) => {
      if (r.status() >= 400 && !r.url().endsWith("/favicon.ico")) problems.push(`${r.status()} ${r.url()}`);
    });
    page.on("console", (m) => {
      if (m.type() === "error" && !m.text().startsWith("Failed to load resource")) problems.push(m.text());
    });
    page.on("pageerror", (e) => problems.push(e.message));
  });
  afterAll(async () => {
    await browser?.close();
    await ops?.close();
    await h?.close();
    await project?.cleanup();
    await webhook?.close();
  });

  it("shows each job's runs, alert states and sparklines of duration and rejects", {
    timeout: 60_000,
  }, async () => {
    await page.goto(`${ops.url}/runs`);
    await expect.poll(() => page.locator("body").getAttribute("data-loaded")).toBe("true");
    expect(await page.title()).toBe("recruit-sync: run history");

    const crm = page.locator('section[data-job="crm-contacts"]');
    const rows = crm.locator("tbody tr");
    expect(await rows.count()).toBe(6);
    // Newest first: the failure under its code, then the run before it.
    expect(await rows.nth(0).locator("td").nth(1).textContent()).toBe("failed (unauthorized)");
    const before = await rows.nth(1).locator("td").allTextContents();
    expect(before.slice(1, 7)).toEqual([
      "completed",
      expect.stringMatching(/^\d\.\d s$/),
      "1,390",
      "10",
      "0.3 s",
      "cli",
    ]);
    // The failure fires jobFailed; the 10 of 1,390 rejected leave rejectedRows ok (its bad day was earlier).
    const badges = await crm.locator(".badge").allTextContents();
    expect(badges).toContainEqual(expect.stringMatching(/^jobFailed: firing since \d{4}-\d\d-\d\d /));
    expect(badges).toContain("rejectedRows: ok");
    // Two sparklines for an import, each a line through its runs (a failure has no rejects count: 0).
    const lines = crm.locator("svg polyline");
    expect(await lines.count()).toBe(2);
    expect((await lines.nth(0).getAttribute("points"))?.split(" ")).toHaveLength(6);
    expect(await crm.locator("svg").nth(1).getAttribute("aria-label")).toBe(
      "rejected rows of the last 6 runs, oldest first: 8, 11, 9, 212, 10, 0",
    );

    const mailchimp = page.locator('section[data-job="mailchimp-audience"]');
    expect(await mailchimp.locator(".badge").allTextContents()).toContainEqual(
      expect.stringMatching(/^rejectedRows: firing since /),
    );

    // Nothing refused by the page's CSP, no script error.
    expect(problems).toEqual([]);
    if (SCREENSHOTS)
      await page.screenshot({ path: path.join(DOCS, "console-9-run-history.png"), fullPage: true });

    // The console links to it.
    await page.goto(`${ops.url}/`);
    await page.getByRole("link", { name: "Run history" }).click();
    await expect.poll(() => page.url()).toBe(`${ops.url}/runs`);
  });
});
