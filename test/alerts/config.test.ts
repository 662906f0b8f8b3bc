import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/index.ts";

describe("alerts in the configuration", () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  async function configDir(yaml: string): Promise<string> {
    dir = await mkdtemp(path.join(os.tmpdir(), "recruit-sync-alerts-config-"));
    await writeFile(path.join(dir, "default.yaml"), yaml);
    return dir;
  }

  it("has every rule on with its default severity and threshold, and no channel", async () => {
    const config = loadConfig({ configDir: await configDir(""), env: {} });
    expect(config.alerts.channels).toEqual([]);
    expect(config.alerts.rules).toMatchObject({
      jobFailed: { enabled: true, severity: "critical" },
      rejectedRows: { severity: "warning", share: 0.05 },
      staleSchedule: { graceMs: 1_800_000 },
      waitingForWorker: { limitMs: 900_000 },
    });
  });

  it("takes the secrets from the environment only", async () => {
    const yaml = 'alerts: { channels: [{ kind: webhook, name: hook, url: "https://ops.example.org/h" }] }';
    const config = loadConfig({
      configDir: await configDir(yaml),
      env: { RECRUIT_SYNC_ALERTS_WEBHOOK_SECRET: "s".repeat(32), RECRUIT_SYNC_ALERTS_SMTP_PASSWORD: "pw" },
    });
    expect(config.alerts.secrets).toEqual({ webhook: "s".repeat(32), smtpPassword: "pw" });
    const inFile = await configDir('alerts: { secrets: { webhook: "0123456789abcdef0123" } }');
    expect(() => loadConfig({ configDir: inFile, env: {} })).toThrow(
      /alerts\.secrets must not be in a file; set RECRUIT_SYNC_ALERTS_WEBHOOK_SECRET/,
    );
  });

  it("refuses two channels of one name, and a rule it does not know", async () => {
    const twice = await configDir(
      'alerts: { channels: [{ kind: slack, name: a, url: "https://x.example/1" }, { kind: slack, name: a, url: "https://x.example/2" }] }',
    );
    expect(() => loadConfig({ configDir: twice, env: {} })).toThrow(
      /alerts\.channels: two channels have the same name/,
    );
    const unknown = await configDir("alerts: { rules: { jobsFailed: { severity: critical } } }");
    expect(() => loadConfig({ configDir: unknown, env: {} })).toThrow(/alerts\.rules/);
  });
});
