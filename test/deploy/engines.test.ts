import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import Fastify from "fastify";
import { describe, expect, it } from "vitest";

// semver comes with npm's own tree (fastify, bullmq); it is only read here, so no dependency of ours.
const semver = createRequire(import.meta.url)("semver") as {
  minVersion(range: string): { version: string } | null;
  satisfies(version: string, range: string): boolean;
};

interface Lock {
  packages: Record<string, { version?: string; engines?: { node?: string } }>;
}
const pkg = JSON.parse(readFileSync("package.json", "utf8")) as {
  engines: { node: string };
  overrides?: Record<string, unknown>;
};
const lock = JSON.parse(readFileSync("package-lock.json", "utf8")) as Lock;

describe("installing on the oldest Node the package supports", () => {
  const oldest = semver.minVersion(pkg.engines.node)?.version ?? "";

  it("locks no package whose engines refuse that Node (npm would warn EBADENGINE)", () => {
    expect(oldest).toMatch(/^20\./);
    const refusing = Object.entries(lock.packages)
      .filter(([name, p]) => name !== "" && p.engines?.node && !semver.satisfies(oldest, p.engines.node))
      .map(([name, p]) => `${name}@${p.version} needs node ${p.engines?.node}`);
    expect(refusing).toEqual([]);
  });

  it("pins light-my-request's cookie to a release that runs on Node 20", () => {
    expect(pkg.overrides).toMatchObject({ "light-my-request": { cookie: expect.any(String) } });
    const cookies = Object.entries(lock.packages).filter(([name]) => name.endsWith("node_modules/cookie"));
    expect(cookies.length).toBeGreaterThan(0);
    for (const [, cookie] of cookies) expect(cookie.version).toMatch(/^1\./);
  });
});

describe("fastify.inject with the overridden cookie package", () => {
  it("sends the cookies it is given as one Cookie header", async () => {
    const app = Fastify();
    app.get("/echo", async (req) => ({ cookie: req.headers.cookie ?? null }));
    try {
      const res = await app.inject({
        method: "GET",
        url: "/echo",
        cookies: { session: "abc", note: "two words" },
      });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ cookie: "session=abc; note=two%20words" });
    } finally {
      await app.close();
    }
  });

  it("reads a Set-Cookie of the response back as cookies", async () => {
    const app = Fastify();
    app.get("/set", async (_req, reply) => {
      reply.header("set-cookie", ["a=1; Path=/", "b=x%20y; HttpOnly"]);
      return "ok";
    });
    try {
      const res = await app.inject({ method: "GET", url: "/set" });
      expect(res.cookies.map((c) => [c.name, c.value])).toEqual([
        ["a", "1"],
        ["b", "x y"],
      ]);
    } finally {
      await app.close();
    }
  });
});
