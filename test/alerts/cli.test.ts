/**
 * `recruit-sync alerts test` and `recruit-sync runs`, through the package's
 * binary as people run them.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifySignature } from "../../src/alerts/index.ts";
import { runCli } from "../helpers/cli.ts";
import { REDIS_URL } from "../helpers/env.ts";
import { type TestRedis, withTestRedis } from "../helpers/redis.ts";
import { alertsHarness, alertsProject } from "./alerts-fixture.ts";
import {
  type SmtpReceiver,
  startSmtpReceiver,
  startWebhookReceiver,
  type WebhookReceiver,
} from "./receivers.ts";

/** A loopback port nothing listens on: a receiver that is down. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const SECRET = "whsec-cli-test-0123456789";

describe("recruit-sync alerts test", () => {
  let webhook: WebhookReceiver;
  let smtp: SmtpReceiver;
  let dir: string;
  let redis: TestRedis;

  beforeAll(async () => {
    webhook = await startWebhookReceiver();
    smtp = await startSmtpReceiver();
    redis = await withTestRedis();
    dir = await mkdtemp(path.join(os.tmpdir(), "recruit-sync-alerts-cli-"));
  });
  afterAll(async () => {
    await webhook?.close();
    await smtp?.close();
    await redis?.cleanup();
    await rm(dir, { recursive: true, force: true });
  });

  /** A project whose channels are the receiver, a port nobody listens on, and the SMTP server. */
  async function project(channels: string[]): Promise<{ configDir: string; env: NodeJS.ProcessEnv }> {
    const configDir = path.join(dir, `config-${channels.length}-${Math.random().toString(36).slice(2)}`);
    await mkdir(configDir);
    await writeFile(
      path.join(configDir, "default.yaml"),
      [
        `redis: { url: "${REDIS_URL}", prefix: "${redis.prefix}" }`,
        "log: { level: silent }",
        "alerts:",
        "  channels:",
        ...channels.map((c) => `    - ${c}`),
      ].join("\n"),
    );
    return {
      configDir,
      env: {
        RECRUIT_SYNC_CONFIG_DIR: configDir,
        RECRUIT_SYNC_ALERTS_WEBHOOK_SECRET: SECRET,
        RECRUIT_SYNC_ALERTS_SMTP_PASSWORD: "smtp-secret",
        NODE_ENV: "",
      },
    };
  }

  it("says per channel that the sample alert was delivered, and exits 0", async () => {
    const p = await project([
      `{ kind: webhook, name: ops-hook, url: "${webhook.url}" }`,
      `{ kind: email, name: on-call, host: 127.0.0.1, port: ${smtp.port}, user: alerts, from: recruit-sync@ops.invalid, to: [on-call@ops.invalid] }`,
    ]);
    const result = await runCli(["alerts", "test"], { env: p.env, timeoutMs: 60_000 });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const lines = result.stdout.trim().split("\n");
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^webhook ops-hook: delivered \(200 from 127\.0\.0\.1:\d+\)$/);
    expect(lines[1]).toMatch(/^email on-call: delivered \(250 from 127\.0\.0\.1:\d+\)$/);
    const taken = webhook.delivered().at(-1);
    expect(
      verifySignature(SECRET, taken?.headers["recruit-sync-signature"] as string, taken?.body ?? ""),
    ).toBe(true);
    expect(JSON.parse(taken?.body ?? "{}")).toMatchObject({ rule: "test", severity: "info" });
    expect(smtp.messages.at(-1)?.raw).toContain("a test alert from recruit-sync alerts test");
  }, 60_000);

  it("says which channel did not take it and why, and exits 1", async () => {
    const port = await closedPort();
    const down = `http://127.0.0.1:${port}/hooks`;
    const p = await project([
      `{ kind: webhook, name: ops-hook, url: "${webhook.url}" }`,
      `{ kind: slack, name: team-slack, url: "${down}" }`,
    ]);
    const result = await runCli(["alerts", "test"], { env: p.env, timeoutMs: 60_000 });
    expect(result.code).toBe(1);
    expect(result.stdout.trim().split("\n")).toEqual([
      expect.stringMatching(/^webhook ops-hook: delivered \(200 from/),
      `slack team-slack: NOT delivered: team-slack: 127.0.0.1:${port} could not be reached (ECONNREFUSED)`,
    ]);
    expect(result.stderr).toBe(
      "recruit-sync: 1 of 2 alert channels did not take the test alert: team-slack\n",
    );
  }, 60_000);

  it("refuses a webhook without its signing secret in the environment, in one line", async () => {
    const p = await project([`{ kind: webhook, name: ops-hook, url: "${webhook.url}" }`]);
    const result = await runCli(["alerts", "test"], {
      env: { ...p.env, RECRUIT_SYNC_ALERTS_WEBHOOK_SECRET: "" },
      timeoutMs: 60_000,
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /^recruit-sync: invalid configuration at alerts\.secrets\.webhook: a webhook channel signs its alerts: set RECRUIT_SYNC_ALERTS_WEBHOOK_SECRET/,
    );
  }, 60_000);
});

describe("recruit-sync runs", () => {
  it("shows each job's runs, sparklines and alert states, as the console's page reads them", async () => {
    const webhook = await startWebhookReceiver();
    const project = await alertsProject({ webhook });
    const h = alertsHarness(project);
    try {
      await h.finishImport("crm-contacts", { rowsRead: 100, rejected: 2 });
      await h.finishImport("crm-contacts", { rowsRead: 120, rejected: 30 });
      await h.finishImport("crm-contacts", { fail: "unauthorized" });
      await h.evaluate();
      const configDir = path.join(project.dir, "config");
      await mkdir(configDir);
      await writeFile(
        path.join(configDir, "default.yaml"),
        `redis: { url: "${REDIS_URL}", prefix: "${project.config.redis.prefix}" }\n`,
      );
      const env = { RECRUIT_SYNC_CONFIG_DIR: configDir, NODE_ENV: "" };
      const result = await runCli(["runs", "--job", "crm-contacts"], { env, timeoutMs: 60_000 });
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      const lines = result.stdout.trimEnd().split("\n");
      expect(lines[0]).toBe("crm-contacts (imports)");
      expect(lines[1]).toMatch(/^ {2}duration .{3} {3}rejects ▁█▁$/);
      expect(lines).toContainEqual(
        expect.stringMatching(
          /^ {2}alert jobFailed: FIRING since .+ \(critical\) crm-contacts: the latest run failed for good \(unauthorized\)$/,
        ),
      );
      expect(lines).toContainEqual(
        "  alert rejectedRows: FIRING since " +
          lines.find((l) => l.includes("rejectedRows"))?.split("since ")[1],
      );
      const table = lines.filter((l) => /^ {2}\d{4}-/.test(l));
      expect(table).toHaveLength(3);
      expect(table[0]).toMatch(/failed \(unauthorized\)/);
      expect(table[1]).toMatch(/completed +\d+\.\d s +120 +30 +0\.0 s +cli$/);
      const json = await runCli(["runs", "--json"], { env, timeoutMs: 60_000 });
      const history = JSON.parse(json.stdout);
      expect(history.jobs[0]).toMatchObject({
        job: "crm-contacts",
        queue: "imports",
        series: { rejected: [2, 30, 0] },
      });
      const bad = await runCli(["runs", "--last", "0"], { env, timeoutMs: 60_000 });
      expect(bad.code).toBe(2);
      expect(bad.stderr).toBe("recruit-sync: --last takes a whole number from 1 to 100, not 0\n");
    } finally {
      await h.close();
      await project.cleanup();
      await webhook.close();
    }
  }, 90_000);
});
