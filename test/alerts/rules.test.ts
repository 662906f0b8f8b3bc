/**
 * Every rule fires once when its state changes and sends one recovery notice
 * when it clears, to a signed webhook and by email, through the alerts queue.
 */
import { rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { watchEpoch } from "../../src/alerts/evaluate.ts";
import { alertKeys, readAlertStates, reportReconciliation, verifySignature } from "../../src/alerts/index.ts";
import { fleetKeys } from "../../src/runtime/fleet-identity.ts";
import { createServiceClient } from "../../src/runtime/index.ts";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import {
  type AlertsHarness,
  type AlertsProject,
  alertsHarness,
  alertsProject,
  WEBHOOK_SECRET,
} from "./alerts-fixture.ts";
import {
  readMail,
  type SmtpReceiver,
  startSmtpReceiver,
  startWebhookReceiver,
  type WebhookReceiver,
} from "./receivers.ts";

const EMAIL = /[^\s@<>"']+@[^\s@<>"']+\.[a-z]{2,}/i;
/** An international phone number as people write it: `+44 20 7946 0958`, `+1 (555) 010-9999`. */
const PHONE = /\+\d{1,3}[\d ().-]{6,}\d/;

describe("alert rules, each once per state change with one recovery notice", () => {
  let webhook: WebhookReceiver;
  let smtp: SmtpReceiver;
  let emu: TestEmulator;
  let project: AlertsProject;
  let h: AlertsHarness;

  beforeAll(async () => {
    webhook = await startWebhookReceiver();
    smtp = await startSmtpReceiver();
    // One request a minute: the first answer spends the budget until the window resets.
    emu = await startTestEmulator({ rateLimit: "1/60s" });
    project = await alertsProject({
      webhook,
      smtp,
      baseUrl: emu.baseUrl,
      token: emu.token,
      rules: {
        rejectedRows: { share: 0.1 },
        staleSchedule: { graceMs: 500 },
        budgetPaused: { limitMs: 1000 },
        redisDataLost: { clearAfterMs: 5000 },
        waitingForWorker: { limitMs: 1000 },
      },
    });
    h = alertsHarness(project);
  });
  afterAll(async () => {
    await h?.close();
    await project?.cleanup();
    await emu?.close();
    await webhook?.close();
    await smtp?.close();
  });

  /** The alerts the webhook took so far, as [rule, state] pairs, each parsed. */
  const taken = () =>
    webhook.delivered().map((r) => {
      const event = JSON.parse(r.body) as { rule: string; state: string; subject: string };
      return `${event.rule} ${event.state} ${event.subject}`;
    });

  it("fires and recovers each rule once, signed, by webhook and email", { timeout: 60_000 }, async () => {
    const keys = alertKeys(project.config.redis.prefix);

    // A job failed for good: one alert, however many evaluations and failures follow.
    await h.finishImport("crm-contacts", { fail: "unauthorized" });
    await h.evaluate();
    await h.evaluate();
    await h.finishImport("crm-contacts", { fail: "unauthorized" });
    await h.evaluate();
    await webhook.waitFor(1);
    // ... and one recovery when it runs well again (3 of 10 rejected: the rejectedRows rule fires too).
    await h.finishImport("crm-contacts", { rowsRead: 10, rejected: 3 });
    await h.evaluate();
    await h.evaluate();
    await webhook.waitFor(3);
    await h.finishImport("crm-contacts", { rowsRead: 10, rejected: 0 });
    await h.evaluate();
    await webhook.waitFor(4);
    expect(taken().sort()).toEqual([
      "jobFailed firing imports/crm-contacts",
      "jobFailed resolved imports/crm-contacts",
      "rejectedRows firing crm-contacts",
      "rejectedRows resolved crm-contacts",
    ]);

    // A schedule (every second, grace 0.5 s) with no worker and no success: stale once due + grace passed.
    await writeFile(
      path.join(project.config.paths.jobsDir, "every-second.yaml"),
      ["kind: export", "resources: [segments]", "schedule: { cron: '* * * * * *', timezone: UTC }"].join(
        "\n",
      ),
    );
    const seen = Date.now();
    await h.evaluate(seen);
    await h.evaluate(seen + 300);
    await h.evaluate(seen + 3000);
    await h.evaluate(seen + 4000);
    await webhook.waitFor(5);
    expect(taken()[4]).toBe("staleSchedule firing every-second");
    // A run of it succeeds: recovered.
    await h.queues.exports.add("export", { kind: "export", job: "every-second", origin: "schedule" });
    const { Worker } = await import("bullmq");
    const standIn = new Worker("exports", async () => ({ status: "succeeded", totals: { rows: 3 } }), {
      connection: h.queues.exports.opts.connection,
      prefix: project.config.redis.prefix,
    });
    await new Promise<void>((resolve) => standIn.once("completed", () => resolve()));
    await standIn.close();
    await h.evaluate();
    await webhook.waitFor(6);
    expect(taken()[5]).toBe("staleSchedule resolved every-second");
    // Judged from now on by its last success, a second late + grace: the file goes, so later evaluations leave it be.
    await rm(path.join(project.config.paths.jobsDir, "every-second.yaml"));

    // The rate budget spent for a minute: paused once it has been for longer than the limit (1 s).
    const service = await createServiceClient(project.config, { shareBudget: true });
    await service.client.searchParticipants("study_1");
    await service.close();
    const pausedAt = Date.now();
    await h.evaluate(pausedAt);
    await h.evaluate(pausedAt + 500);
    await h.evaluate(pausedAt + 1500);
    await h.evaluate(pausedAt + 2500);
    await webhook.waitFor(7);
    expect(taken()[6]).toBe("budgetPaused firing rate budget");
    // The window's state gone (a new window): no longer paused.
    const budgetKeys = await project.redis.redis.keys(`${project.config.redis.prefix}:governor:*`);
    await project.redis.redis.del(...budgetKeys);
    await h.evaluate(pausedAt + 3000);
    await webhook.waitFor(8);
    expect(taken()[7]).toBe("budgetPaused resolved rate budget");

    // Redis lost its data (the fleet epoch gone): noticed, then cleared after clearAfterMs without another loss.
    const epochChanged = watchEpoch(project.redis.redis, project.config.redis.prefix);
    expect(await epochChanged()).toBe(false);
    await project.redis.redis.del(fleetKeys(project.config.redis.prefix).epoch);
    expect(await epochChanged()).toBe(true);
    expect(await epochChanged()).toBe(false);
    await h.evaluate();
    await h.evaluate();
    await webhook.waitFor(9);
    expect(taken()[8]).toBe(`redisDataLost firing ${project.config.redis.prefix}`);
    // Six seconds later, as the mark says (clearAfterMs is 5 s).
    const mark = JSON.parse((await project.redis.redis.get(keys.dataLost)) ?? "{}");
    await project.redis.redis.set(keys.dataLost, JSON.stringify({ ...mark, at: mark.at - 6000 }));
    await h.evaluate();
    await webhook.waitFor(10);
    expect(taken()[9]).toBe(`redisDataLost resolved ${project.config.redis.prefix}`);

    // A reconciliation found people missing: once, then cleared by one that found everyone.
    const at = new Date().toISOString();
    await reportReconciliation(project.redis.redis, project.config.redis.prefix, {
      job: "crm-contacts",
      missing: 3,
      checked: 10,
      at,
    });
    await h.evaluate();
    await reportReconciliation(project.redis.redis, project.config.redis.prefix, {
      job: "crm-contacts",
      missing: 2,
      checked: 10,
      at,
    });
    await h.evaluate();
    await webhook.waitFor(11);
    await reportReconciliation(project.redis.redis, project.config.redis.prefix, {
      job: "crm-contacts",
      missing: 0,
      checked: 10,
      at,
    });
    await h.evaluate();
    await webhook.waitFor(12);
    expect(taken().slice(10).sort()).toEqual([
      "missingPeople firing crm-contacts",
      "missingPeople resolved crm-contacts",
    ]);

    // A run waiting for a worker (nobody serves the exports queue now) longer than the limit.
    const waiting = await h.queues.exports.add("export", { kind: "export", job: "by-hand", origin: "cli" });
    await h.evaluate();
    await h.evaluate(Date.now() + 2000);
    await h.evaluate(Date.now() + 2500);
    await webhook.waitFor(13);
    await waiting.remove();
    await h.evaluate(Date.now() + 3000);
    await webhook.waitFor(14);
    expect(taken().slice(12).sort()).toEqual([
      "waitingForWorker firing exports",
      "waitingForWorker resolved exports",
    ]);

    // Nothing more: every change was told once, and its recovery once.
    await h.evaluate();
    await smtp.waitFor(14);
    await new Promise((r) => setTimeout(r, 300));
    expect(webhook.delivered()).toHaveLength(14);
    expect(smtp.messages).toHaveLength(14);
    expect(new Set(taken()).size).toBe(14);

    // Every webhook request is signed over its timestamp and body; every email sent as the SMTP user.
    for (const r of webhook.delivered()) {
      expect(verifySignature(WEBHOOK_SECRET, r.headers["recruit-sync-signature"] as string, r.body)).toBe(
        true,
      );
      expect(
        verifySignature("another-secret-0123456789", r.headers["recruit-sync-signature"] as string, r.body),
      ).toBe(false);
    }
    expect(smtp.messages.every((m) => m.user === "alerts" && m.to[0] === "on-call@ops.invalid")).toBe(true);

    // No alert carries an email or a phone, though the failed run's message, file and report held both.
    for (const r of webhook.delivered()) {
      expect(r.body).not.toContain("ada.lovelace");
      expect(r.body).not.toContain("7946");
      expect(r.body).not.toMatch(EMAIL);
      expect(r.body).not.toMatch(PHONE);
    }
    for (const m of smtp.messages) {
      const { headers, body } = readMail(m.raw);
      expect(headers).not.toContain("ada.lovelace");
      expect(body).not.toContain("ada.lovelace");
      expect(body).not.toContain("7946");
      expect(body).not.toMatch(EMAIL);
      expect(body).not.toMatch(PHONE);
    }

    // The states as Redis keeps them: all cleared.
    const states = await readAlertStates(project.redis.redis, keys);
    expect(states.filter((s) => s.state === "firing")).toEqual([]);
  });
});
