/**
 * Deliveries go through the alerts queue: retried with backoff until the
 * receiver takes them, and kept as failed jobs for ops when it never does.
 */
import { afterEach, describe, expect, it } from "vitest";
import { alertKeys, decide, startAlerts } from "../../src/alerts/index.ts";
import { startOpsServer } from "../../src/ops/index.ts";
import { type AlertsHarness, type AlertsProject, alertsHarness, alertsProject } from "./alerts-fixture.ts";
import { readMail, startSmtpReceiver, startWebhookReceiver, type WebhookReceiver } from "./receivers.ts";

describe("delivering an alert through the alerts queue", () => {
  let webhook: WebhookReceiver | undefined;
  let project: AlertsProject | undefined;
  let h: AlertsHarness | undefined;
  afterEach(async () => {
    await h?.close();
    await project?.cleanup();
    await webhook?.close();
  });

  it("gives the alert to a receiver that answered 500 three times on the fourth try", async () => {
    webhook = await startWebhookReceiver();
    webhook.answer(500, 500, 500);
    project = await alertsProject({ webhook, delivery: { attempts: 5, backoffMs: 20 } });
    h = alertsHarness(project);
    await h.finishImport("crm-contacts", { fail: "forbidden" });
    await h.evaluate();
    const [taken] = await webhook.waitFor(1);
    expect(webhook.received.map((r) => r.status)).toEqual([500, 500, 500, 200]);
    // The same alert each time: one id, one change.
    const ids = new Set(webhook.received.map((r) => JSON.parse(r.body).id));
    expect(ids.size).toBe(1);
    expect(JSON.parse(taken?.body ?? "{}")).toMatchObject({ rule: "jobFailed", state: "firing", seq: 1 });
    let jobs = await h.alertsQueue.getJobs(["completed"]);
    while (jobs.length === 0) {
      await new Promise((r) => setTimeout(r, 20));
      jobs = await h.alertsQueue.getJobs(["completed"]);
    }
    expect(jobs).toHaveLength(1);
    expect(jobs[0]?.attemptsMade).toBe(4);
  }, 30_000);

  it("keeps an alert no attempt could deliver as a failed job of the alerts queue", async () => {
    webhook = await startWebhookReceiver();
    webhook.answer(...Array<number>(10).fill(503));
    project = await alertsProject({ webhook, delivery: { attempts: 3, backoffMs: 10 } });
    h = alertsHarness(project);
    const keys = alertKeys(project.config.redis.prefix);
    await decide(project.redis.redis, keys, project.config.redis.prefix, {
      rule: "missingPeople",
      subject: "crm-contacts",
      firing: true,
      severity: "warning",
      title: "crm-contacts: reconciliation found 2 of 10 people missing from the service",
      facts: { job: "crm-contacts", missing: 2, checked: 10 },
    });
    await h.evaluate();
    for (;;) {
      const failed = await h.alertsQueue.getJobs(["failed"]);
      if (failed.length > 0) {
        expect(failed[0]?.attemptsMade).toBe(3);
        expect(failed[0]?.failedReason).toMatch(
          /^alert_undelivered: ops-hook: 127\.0\.0\.1:\d+ answered 503$/,
        );
        expect(failed[0]?.data.event).toMatchObject({ rule: "missingPeople", state: "firing" });
        break;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(webhook.received).toHaveLength(3);
    expect(project.logText()).toContain("alert not delivered, for good");
    // Kept for ops: the ops API lists it (the dashboard's alerts queue too).
    const config = { ...project.config, ops: { ...project.config.ops, auth: false, port: 0 } };
    const ops = await startOpsServer({ config, logger: project.logger, queues: h.queues });
    try {
      const answer = (await (await fetch(`${ops.url}/api/alerts`)).json()) as { undelivered: unknown[] };
      expect(answer.undelivered).toEqual([
        expect.objectContaining({
          channel: "ops-hook",
          rule: "missingPeople",
          state: "firing",
          attemptsMade: 3,
          failedReason: expect.stringMatching(/answered 503$/),
        }),
      ]);
    } finally {
      await ops.close();
    }
    // The webhook's path is a secret for some receivers (Slack's): the logs name the host only.
    expect(project.logText()).not.toContain("/hooks/recruit-sync");
  }, 30_000);

  it("sends one alert when several processes evaluate at once, each every 100 ms", async () => {
    webhook = await startWebhookReceiver();
    project = await alertsProject({ webhook, evaluateEveryMs: 100 });
    h = alertsHarness(project);
    await h.finishImport("crm-contacts", { fail: "forbidden" });
    const fleet = await Promise.all(
      [1, 2, 3].map(() =>
        startAlerts({ config: (project as AlertsProject).config, logger: (project as AlertsProject).logger }),
      ),
    );
    try {
      await webhook.waitFor(1);
      // Twenty periods more: each process tried every tick.
      await new Promise((r) => setTimeout(r, 2000));
      expect(webhook.received).toHaveLength(1);
      expect(JSON.parse(webhook.received[0]?.body ?? "{}")).toMatchObject({ rule: "jobFailed", seq: 1 });
    } finally {
      await Promise.all(fleet.map((a) => a.close()));
    }
  }, 30_000);

  it("sends a Slack channel an incoming-webhook body, {text, blocks}, and email a subject and the facts", async () => {
    webhook = await startWebhookReceiver();
    const smtp = await startSmtpReceiver();
    project = await alertsProject({ slack: webhook, smtp });
    h = alertsHarness(project);
    try {
      await h.finishImport("crm-contacts", { fail: "unauthorized" });
      await h.evaluate();
      const [taken] = await webhook.waitFor(1);
      const body = JSON.parse(taken?.body ?? "{}") as { text: string; blocks: Array<{ type: string }> };
      expect(Object.keys(body).sort()).toEqual(["blocks", "text"]);
      expect(body.text).toBe(
        "[CRITICAL] firing: crm-contacts: the latest run failed for good (unauthorized)",
      );
      expect(body.blocks.map((b) => b.type)).toEqual(["header", "section", "context"]);
      expect(JSON.stringify(body.blocks[1])).toContain("• code: unauthorized");
      // Slack's webhook is not ours to sign: no signature header.
      expect(taken?.headers["recruit-sync-signature"]).toBeUndefined();
      await smtp.waitFor(1);
      const mail = readMail(smtp.messages[0]?.raw ?? "");
      expect(mail.headers).toMatch(
        /^Subject: recruit-sync \[CRITICAL\] firing: crm-contacts: the latest run failed for good \(unauthorized\)$/m,
      );
      expect(mail.headers).toMatch(/^X-Recruit-Sync-Alert-ID: alert-jobFailed-[0-9a-f]{12}-1$/m);
      expect(mail.body.split(/\r?\n/).slice(0, 6)).toEqual([
        "[CRITICAL] firing: crm-contacts: the latest run failed for good (unauthorized)",
        "",
        "job: crm-contacts",
        "queue: imports",
        "code: unauthorized",
        "runId: 1",
      ]);
    } finally {
      await smtp.close();
    }
  }, 30_000);
});
