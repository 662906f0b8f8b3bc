/**
 * A process killed between an alert's decision and its delivery loses no
 * alert, and the alert still reaches the receiver once.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { createInterface } from "node:readline";
import { afterEach, describe, expect, it } from "vitest";
import { alertKeys, readAlertStates, startAlerts } from "../../src/alerts/index.ts";
import { type AlertsHarness, type AlertsProject, alertsHarness, alertsProject } from "./alerts-fixture.ts";
import { startWebhookReceiver, type WebhookReceiver } from "./receivers.ts";

const CHILD = path.resolve(import.meta.dirname, "fixtures/alerts-child.ts");

/** Starts the child and SIGKILLs it once it prints `line`; resolves when it is dead. */
function killAt(project: AlertsProject, at: "enqueue" | "delivery", line: string, also?: Promise<void>) {
  return new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", CHILD], {
      env: { ...process.env, ALERTS_CONFIG: JSON.stringify(project.config), ALERTS_KILL_AT: at },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    createInterface({ input: child.stdout }).on("line", async (l) => {
      if (l !== line) return;
      await also;
      child.kill("SIGKILL");
    });
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      if (signal === "SIGKILL") resolve();
      else reject(new Error(`the child ended (${code}) before it was killed: ${stderr.slice(-800)}`));
    });
  });
}

describe("a process killed between an alert's decision and its delivery", () => {
  let webhook: WebhookReceiver | undefined;
  let project: AlertsProject | undefined;
  let h: AlertsHarness | undefined;
  afterEach(async () => {
    await h?.close();
    await project?.cleanup();
    await webhook?.close();
  });

  it.each([
    ["after deciding, before queueing the alert", "enqueue", "decided"],
    ["while delivering it (the receiver had not answered)", "delivery", "queued"],
  ] as const)(
    "still delivers the alert once: killed %s",
    async (_what, at, line) => {
      webhook = await startWebhookReceiver();
      if (at === "delivery") webhook.answer(0);
      project = await alertsProject({ webhook, evaluateEveryMs: 200 });
      h = alertsHarness(project);
      await h.finishImport("crm-contacts", { fail: "unauthorized" });

      await killAt(project, at, line, at === "delivery" ? webhook.waitForRequests(1) : undefined);
      const keys = alertKeys(project.config.redis.prefix);
      // The decision was made and kept: the state says firing, the alert is in the outbox or the queue.
      const states = await readAlertStates(project.redis.redis, keys);
      expect(states.find((s) => s.rule === "jobFailed")).toMatchObject({ state: "firing", seq: 1 });
      expect(webhook.delivered()).toHaveLength(0);

      // Another process of the fleet (a worker restarted) takes over.
      const alerts = await startAlerts({ config: project.config, logger: project.logger });
      try {
        const [taken] = await webhook.waitFor(1, 30_000);
        expect(JSON.parse(taken?.body ?? "{}")).toMatchObject({ rule: "jobFailed", state: "firing", seq: 1 });
        // More evaluations decide nothing new and send nothing again.
        await alerts.evaluateNow();
        await new Promise((r) => setTimeout(r, 600));
        await alerts.evaluateNow();
        await new Promise((r) => setTimeout(r, 300));
        expect(webhook.delivered()).toHaveLength(1);
      } finally {
        await alerts.close();
      }
    },
    60_000,
  );
});
