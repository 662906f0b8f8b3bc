/**
 * A schedule whose workers are all gone produces no error at all: the ops
 * server, which evaluates the rules too, notices it within its grace period.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { AlertEvent } from "../../src/alerts/index.ts";
import { nextTick } from "../../src/alerts/index.ts";
import { type OpsServer, startOpsServer } from "../../src/ops/index.ts";
import { type AlertsProject, alertsProject } from "./alerts-fixture.ts";
import { startWebhookReceiver, type WebhookReceiver } from "./receivers.ts";

describe("a stale schedule with no worker running", () => {
  let webhook: WebhookReceiver | undefined;
  let project: AlertsProject | undefined;
  let ops: OpsServer | undefined;
  afterEach(async () => {
    await ops?.close();
    await project?.cleanup();
    await webhook?.close();
  });

  it("is noticed by the ops server once its cron interval and grace have passed", async () => {
    webhook = await startWebhookReceiver();
    const graceMs = 1500;
    project = await alertsProject({
      webhook,
      evaluateEveryMs: 250,
      rules: { staleSchedule: { graceMs } },
      jobs: {
        "every-two-seconds": [
          "kind: export",
          "resources: [segments]",
          "schedule: { cron: '*/2 * * * * *', timezone: UTC }",
        ].join("\n"),
      },
    });
    const config = { ...project.config, ops: { ...project.config.ops, auth: false, port: 0 } };
    const started = Date.now();
    // No worker anywhere: the ops server alone.
    ops = await startOpsServer({ config, logger: project.logger });
    const [taken] = await webhook.waitFor(1, 20_000);
    const event = JSON.parse(taken?.body ?? "{}") as AlertEvent;
    expect(event).toMatchObject({
      rule: "staleSchedule",
      subject: "every-two-seconds",
      state: "firing",
      severity: "critical",
      facts: { job: "every-two-seconds", lastSuccessAt: null, graceMs },
    });
    // Due at the first tick after the ops server first saw it; told once that tick's grace had passed.
    const due = Date.parse(String(event.facts.dueAt));
    expect(due).toBeGreaterThan(started);
    expect(due).toBeLessThanOrEqual(nextTick("*/2 * * * * *", "UTC", started + 3000));
    expect(Date.parse(event.at)).toBeGreaterThan(due + graceMs);
    // The ops API shows it firing.
    const alerts = (await (await fetch(`${ops.url}/api/alerts`)).json()) as {
      states: Array<{ rule: string; subject: string; state: string }>;
    };
    expect(alerts.states).toContainEqual(
      expect.objectContaining({ rule: "staleSchedule", subject: "every-two-seconds", state: "firing" }),
    );
    // Its delivery is a job of the alerts queue, on the dashboard beside the other two.
    const board = async () =>
      (await (await fetch(`${ops?.url}/ui/api/queues`)).json()) as {
        queues: Array<{ name: string; counts: Record<string, number> }>;
      };
    expect((await board()).queues.map((q) => q.name).sort()).toEqual(["alerts", "exports", "imports"]);
    await expect
      .poll(async () => (await board()).queues.find((q) => q.name === "alerts")?.counts.completed)
      .toBeGreaterThanOrEqual(1);
  }, 30_000);
});
