/**
 * The signature check docs/ops.md shows receivers is the code this test runs,
 * taken from the page, against alerts recruit-sync really delivered.
 */
import { readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type AlertsHarness,
  type AlertsProject,
  alertsHarness,
  alertsProject,
  WEBHOOK_SECRET,
} from "./alerts-fixture.ts";
import { type ReceivedRequest, startWebhookReceiver, type WebhookReceiver } from "./receivers.ts";

const OPS_MD = path.resolve(import.meta.dirname, "../../docs/ops.md");

type Verify = (secret: string, header: unknown, rawBody: string, nowMs?: number) => boolean;

/** The ```js block after `<!-- signature-check -->` in docs/ops.md, as a module. */
async function documentedCheck(dir: string): Promise<Verify> {
  const text = await readFile(OPS_MD, "utf8");
  const match = /<!-- signature-check -->\s*```js\n([\s\S]*?)```/.exec(text);
  if (!match?.[1]) throw new Error("docs/ops.md has no ```js block after <!-- signature-check -->");
  const file = path.join(dir, "verify-recruit-sync.mjs");
  await writeFile(file, match[1]);
  const module = (await import(file)) as { verifyRecruitSyncSignature: Verify };
  return module.verifyRecruitSyncSignature;
}

describe("the signature check docs/ops.md shows", () => {
  let webhook: WebhookReceiver;
  let project: AlertsProject;
  let h: AlertsHarness;
  let verify: Verify;
  let taken: ReceivedRequest;

  beforeAll(async () => {
    webhook = await startWebhookReceiver();
    project = await alertsProject({ webhook });
    h = alertsHarness(project);
    verify = await documentedCheck(project.dir);
    await h.finishImport("crm-contacts", { fail: "forbidden" });
    await h.evaluate();
    [taken] = (await webhook.waitFor(1)) as [ReceivedRequest];
  });
  afterAll(async () => {
    await h?.close();
    await rm(path.join(project.dir, "verify-recruit-sync.mjs"), { force: true });
    await project?.cleanup();
    await webhook?.close();
  });

  const header = () => taken.headers["recruit-sync-signature"];

  it("accepts an alert recruit-sync delivered, signed with the shared secret", () => {
    expect(header()).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(verify(WEBHOOK_SECRET, header(), taken.body)).toBe(true);
  });

  it("refuses a body changed on the way, and another secret", () => {
    const changed = taken.body.replace('"critical"', '"info"');
    expect(changed).not.toBe(taken.body);
    expect(verify(WEBHOOK_SECRET, header(), changed)).toBe(false);
    expect(verify("not-the-shared-secret-000", header(), taken.body)).toBe(false);
  });

  it("refuses the same request replayed after the 5-minute tolerance", () => {
    const t = Number(/t=(\d+)/.exec(String(header()))?.[1]) * 1000;
    expect(verify(WEBHOOK_SECRET, header(), taken.body, t + 299_000)).toBe(true);
    expect(verify(WEBHOOK_SECRET, header(), taken.body, t + 301_000)).toBe(false);
  });

  it("refuses a request without a signature, or with a timestamp moved", () => {
    expect(verify(WEBHOOK_SECRET, undefined, taken.body)).toBe(false);
    const moved = String(header()).replace(/t=(\d+)/, (_m, t: string) => `t=${Number(t) + 60}`);
    expect(verify(WEBHOOK_SECRET, moved, taken.body)).toBe(false);
  });
});
