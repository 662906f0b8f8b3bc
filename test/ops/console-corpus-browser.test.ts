import { readFile } from "node:fs/promises";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OpsServer } from "../../src/ops/index.ts";
import { launchChromium } from "../helpers/chromium.ts";
import type { TestEmulator } from "../helpers/emulator.ts";
import { type OpsStack, PASSWORD, startOpsStack } from "./ops-fixture.ts";

const CORPUS = path.resolve(import.meta.dirname, "../corpus");
const FILE = "mailchimp-status-generated.csv";

/** The hand count beside the file (test/corpus/SOURCES.md): who a careful person imports, and their consent. */
interface Expected {
  importable: number;
  consent: { notOptedOut: number; optedOut: number; unstated: number };
}

/**
 * A real Mailchimp export (people scrambled) taken through the console as a
 * person would: upload, the suggestion untouched but for the study, preview,
 * run; the people in the service are then counted, with their consent.
 */
describe("a real export through the console", () => {
  let emu: TestEmulator;
  let ops: OpsServer;
  let browser: Browser;
  let page: Page;

  let stack: OpsStack;
  beforeAll(async () => {
    stack = await startOpsStack();
    ({ emu, ops } = stack);
    browser = await launchChromium();
    const context = await browser.newContext({ httpCredentials: { username: "ops", password: PASSWORD } });
    page = await context.newPage();
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  it(`imports ${FILE}: every member arrives, the unsubscribed opted out, nobody subscribed opted out`, {
    timeout: 120_000,
  }, async () => {
    const bytes = await readFile(path.join(CORPUS, FILE));
    const expected = JSON.parse(
      await readFile(path.join(CORPUS, FILE.replace(/\.csv$/, ".expected.json")), "utf8"),
    ) as Expected;
    const lines = bytes.toString("utf8").trim().split(/\r?\n/).slice(1);
    const emails = new Set(lines.map((l) => (l.split(",")[0] ?? "").toLowerCase()));
    const unsubscribed = new Set(
      lines
        .filter((l) => l.split(",")[4] === "unsubscribed")
        .map((l) => (l.split(",")[0] ?? "").toLowerCase()),
    );

    await page.goto(`${ops.url}/`);
    await page
      .getByLabel(/Drop a CSV file here/)
      .setInputFiles({ name: FILE, mimeType: "text/csv", buffer: bytes });
    await expect.poll(() => page.locator("#mapping").isVisible(), { timeout: 20_000 }).toBe(true);
    expect(await page.getByLabel("Import status as").inputValue()).toBe("isOptedOut");
    await page.getByLabel("Study id").fill("study_1");

    await page.getByRole("button", { name: "Preview" }).click();
    await expect.poll(() => page.locator("#preview").isVisible(), { timeout: 30_000 }).toBe(true);
    const counts = await page.locator("#preview-counts").textContent();
    expect(counts).toContain(`${expected.importable}would be imported`);
    expect(counts).toContain(`${expected.consent.optedOut}would be opted out`);
    expect(counts).toContain(`${expected.consent.notOptedOut}held back as not opted out`);

    await page.getByRole("button", { name: "Run the import" }).click();
    await expect
      .poll(() => page.locator("#run-state").textContent(), { timeout: 90_000, interval: 500 })
      .toBe("Finished.");

    const arrived = (await emu.snapshot()).people.filter((p) => p.email && emails.has(p.email));
    expect(arrived).toHaveLength(expected.importable);
    const optedOut = arrived.filter((p) => p.isOptedOut === true).map((p) => p.email);
    expect(optedOut).toHaveLength(expected.consent.optedOut);
    expect(new Set(optedOut)).toEqual(unsubscribed);
  });
});
