import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/index.ts";
import { ConfigError } from "../../src/errors/index.ts";

const repoConfig = path.resolve("config");

function dirWith(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), "recruit-sync-config-"));
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
  return dir;
}

describe("loadConfig", () => {
  it("loads the committed defaults", () => {
    const c = loadConfig({ configDir: repoConfig, env: {} });
    expect(c.service.baseUrl).toBe("http://127.0.0.1:4010/api/public/v1");
    expect(c.warehouse.url).toBe(`duckdb:${path.resolve("data/warehouse.duckdb")}`);
    expect(c.paths.jobsDir).toBe(path.resolve("jobs"));
    expect(c.service.token).toBeUndefined();
    expect(c.service.retry.maxAttempts).toBe(5);
  });

  it("lets the NODE_ENV file, then the environment, then overrides win in that order", () => {
    const dir = dirWith({
      "default.yaml":
        "service: {baseUrl: 'http://a/api/public/v1'}\nredis: {url: 'redis://a', prefix: p}\nwarehouse: {url: 'duckdb:a'}\npaths: {jobsDir: j, dataDir: d}\n",
      "staging.yaml": "service: {timeoutMs: 5}\nwarehouse: {url: 'file:/tmp/out'}\n",
    });
    const c = loadConfig({
      configDir: dir,
      env: { NODE_ENV: "staging", RECRUIT_SYNC_WAREHOUSE: "postgres://x/y", RECRUIT_SYNC_API_TOKEN: "tok" },
      overrides: { redis: { url: "redis://override" } },
    });
    expect(c.service.timeoutMs).toBe(5);
    expect(c.service.baseUrl).toBe("http://a/api/public/v1");
    expect(c.warehouse.url).toBe("postgres://x/y");
    expect(c.service.token).toBe("tok");
    expect(c.redis.url).toBe("redis://override");
  });

  it("refuses a token written in a file", () => {
    const dir = dirWith({ "default.yaml": "service: {token: abc}\n" });
    expect(() => loadConfig({ configDir: dir, env: {} })).toThrow(/RECRUIT_SYNC_API_TOKEN/);
  });

  it("names the path of an invalid value and lists every issue", () => {
    let err: unknown;
    try {
      loadConfig({
        configDir: repoConfig,
        env: { RECRUIT_SYNC_WAREHOUSE: "mysql://x", REDIS_URL: "http://nope" },
      });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const ce = err as ConfigError;
    expect(ce.code).toBe("config_invalid");
    expect(ce.issues.map((i) => i.path).sort()).toEqual(["redis.url", "warehouse.url"]);
    expect(ce.message).toMatch(/^invalid configuration at (redis|warehouse)\.url/);
  });

  it("rejects unknown keys so a typo does not pass silently", () => {
    const dir = dirWith({ "default.yaml": "servcie: {baseUrl: x}\n" });
    expect(() => loadConfig({ configDir: dir, env: {} })).toThrow(ConfigError);
  });

  it("reports YAML syntax errors with the file name", () => {
    const dir = dirWith({ "default.yaml": "service: [unclosed\n" });
    expect(() => loadConfig({ configDir: dir, env: {} })).toThrow(/default\.yaml: not valid YAML/);
  });
});
