import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/errors/index.ts";
import { isClusterUrl, parseClusterUrl, safeRedisUrl } from "../../src/runtime/index.ts";

describe("the redis+cluster:// form of redis.url", () => {
  it("reads the seed nodes, a node without a port being on 6379", () => {
    expect(parseClusterUrl("redis+cluster://10.0.0.1:7000,10.0.0.2,[::1]:7002")).toEqual({
      nodes: [
        { host: "10.0.0.1", port: 7000 },
        { host: "10.0.0.2", port: 6379 },
        { host: "::1", port: 7002 },
      ],
      tls: false,
    });
  });

  it("reads credentials and TLS, and keeps the password out of messages", () => {
    const url = "rediss+cluster://ops:s%40cret@redis-a:6380,redis-b:6380";
    expect(parseClusterUrl(url)).toEqual({
      nodes: [
        { host: "redis-a", port: 6380 },
        { host: "redis-b", port: 6380 },
      ],
      username: "ops",
      password: "s@cret",
      tls: true,
    });
    expect(safeRedisUrl(url)).toBe("rediss+cluster://ops:***@redis-a:6380,redis-b:6380");
    expect(safeRedisUrl("redis+cluster://:pw@h:1")).toBe("redis+cluster://:***@h:1");
  });

  it("tells a cluster URL from a single-node one", () => {
    expect(isClusterUrl("redis+cluster://h:1")).toBe(true);
    expect(isClusterUrl("rediss+cluster://h:1")).toBe(true);
    expect(isClusterUrl("redis://h:1")).toBe(false);
  });

  it.each([
    ["redis+cluster://h:1,h:2/0", /no database/],
    ["redis+cluster://h:99999", /"h:99999" is not host:port/],
    ["redis+cluster://h:1,,h:2", /"" is not host:port/],
    ["redis+cluster://:pw@h:port", /"h:port" is not host:port/],
  ])("refuses %s with a message naming the part", (url, message) => {
    expect(() => parseClusterUrl(url)).toThrow(ConfigError);
    expect(() => parseClusterUrl(url)).toThrow(message);
    expect(() => parseClusterUrl(url)).not.toThrow(/pw/);
  });
});
