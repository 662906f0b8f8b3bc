import type { ChildProcessWithoutNullStreams } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { adminTokenRequired, isLoopbackHost } from "../../src/emulator/admin-auth.ts";
import { DEFAULT_TOKEN, startEmulator } from "../../src/emulator/index.ts";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import { startEmulatorChild } from "./cli-child.ts";

let emu: TestEmulator | undefined;
const children: ChildProcessWithoutNullStreams[] = [];
afterEach(async () => {
  await emu?.close();
  emu = undefined;
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill("SIGKILL");
});

/** An admin request with exactly the Authorization header given (none when undefined). */
async function admin(
  origin: string,
  path: string,
  init: { method?: string; body?: unknown; authorization?: string } = {},
): Promise<{ status: number; json: unknown; headers: Headers }> {
  const headers: Record<string, string> = {};
  if (init.authorization !== undefined) headers.authorization = init.authorization;
  if (init.body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(`${origin}/__emulator${path}`, {
    method: init.method ?? (init.body === undefined ? "GET" : "POST"),
    headers,
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });
  const text = await res.text();
  return { status: res.status, json: text === "" ? undefined : JSON.parse(text), headers: res.headers };
}

describe("the admin token", () => {
  it("is required by default: an emulator started without any token option refuses /__emulator/* with 401", async () => {
    const plain = await startEmulator({ port: 0, sizes: { people: 4 } });
    try {
      expect(plain.adminToken).toMatch(/^emu_admin_[\w-]{32}$/);
      for (const path of ["/snapshot", "/requests", "/requests/journal", "/clock", "/faults", ""]) {
        expect((await admin(plain.origin, path)).status, path).toBe(401);
      }
      expect((await admin(plain.origin, "/faults", { body: { errorRate: 1 } })).status).toBe(401);
      expect((await admin(plain.origin, "/reset", { method: "POST" })).status).toBe(401);
      const ok = await admin(plain.origin, "/snapshot", { authorization: `Bearer ${plain.adminToken}` });
      expect(ok.status).toBe(200);
      expect((ok.json as { people: unknown[] }).people).toHaveLength(4);
    } finally {
      await plain.close();
    }
  });

  it("is open with openAdmin on loopback only", async () => {
    const open = await startEmulator({ port: 0, sizes: { people: 2 }, openAdmin: true });
    try {
      expect(open.adminToken).toBeUndefined();
      expect((await admin(open.origin, "/snapshot")).status).toBe(200);
    } finally {
      await open.close();
    }
    await expect(startEmulator({ port: 0, host: "0.0.0.0", openAdmin: true })).rejects.toThrow(
      /the admin API cannot be open on 0\.0\.0\.0.*drop --open-admin/,
    );
    // A token given wins over openAdmin: it is required.
    const given = await startEmulator({ port: 0, sizes: { people: 2 }, openAdmin: true, adminToken: "x" });
    try {
      expect((await admin(given.origin, "/snapshot")).status).toBe(401);
    } finally {
      await given.close();
    }
  });

  it("answers 401 with a JSON reason to admin requests without the admin token", async () => {
    emu = await startTestEmulator({ sizes: { people: 6 } });
    const token = emu.emulator.adminToken;
    expect(token).toMatch(/^emu_admin_[\w-]{32}$/);

    const none = await admin(emu.origin, "/snapshot");
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toMatch(/^Bearer /);
    expect(none.json).toEqual({
      errors: [{ message: expect.stringContaining("admin token"), path: [] }],
    });
    // A service token is not the admin token.
    const service = await admin(emu.origin, "/snapshot", { authorization: `Bearer ${emu.token}` });
    expect(service.status).toBe(401);
    expect(service.json).toEqual({ errors: [{ message: expect.stringContaining("wrong"), path: [] }] });

    // Nothing that changes the store gets through without it.
    const wipe = await admin(emu.origin, "/snapshot", { method: "PUT", body: { people: [] } });
    expect(wipe.status).toBe(401);
    const reseed = await admin(emu.origin, "/seed", { body: { sizes: { people: 1 } } });
    expect(reseed.status).toBe(401);

    const ok = await admin(emu.origin, "/snapshot", { authorization: `Bearer ${token}` });
    expect(ok.status).toBe(200);
    expect((ok.json as { people: unknown[] }).people).toHaveLength(6);
  });

  it("requires a token given on loopback, and keeps the service API on the service tokens", async () => {
    emu = await startTestEmulator({ sizes: { people: 3 }, adminToken: "loopback-admin-secret" });
    expect(emu.emulator.adminToken).toBe("loopback-admin-secret");
    expect((await admin(emu.origin, "/requests")).status).toBe(401);
    const ok = await admin(emu.origin, "/requests", { authorization: "Bearer loopback-admin-secret" });
    expect(ok.status).toBe(200);
    // The admin token opens the admin API only.
    const asService = await fetch(`${emu.baseUrl}/segments/search`, {
      method: "POST",
      headers: { authorization: "Bearer loopback-admin-secret", "content-type": "application/json" },
      body: "{}",
    });
    expect(asService.status).toBe(401);
    expect((await emu.client.searchSegments()).results.length).toBeGreaterThan(0);
  });

  it("guards the admin API and replaces the well-known token when listening beyond loopback", async () => {
    // Bound to every interface but reached through 127.0.0.1 only; the tokens are random.
    const wide = await startEmulator({ host: "0.0.0.0", port: 0, sizes: { people: 3 } });
    try {
      const origin = `http://127.0.0.1:${new URL(wide.origin).port}`;
      expect(wide.adminToken).toMatch(/^emu_admin_[\w-]{32}$/);
      expect(wide.tokens.map((t) => t.token)).not.toContain(DEFAULT_TOKEN);
      expect(wide.tokens[0]?.token).toMatch(/^emu_[\w-]{32}$/);
      expect((await admin(origin, "/snapshot")).status).toBe(401);
      expect((await admin(origin, "/snapshot", { authorization: `Bearer ${wide.adminToken}` })).status).toBe(
        200,
      );
      const wellKnown = await fetch(`${origin}/api/public/v1/segments/search`, {
        method: "POST",
        headers: { authorization: `Bearer ${DEFAULT_TOKEN}`, "content-type": "application/json" },
        body: "{}",
      });
      expect(wellKnown.status).toBe(401);
    } finally {
      await wide.close();
    }
  });

  it("is required unless opened on loopback, and always beyond loopback", () => {
    for (const host of [
      "127.0.0.1",
      "127.8.9.10",
      "localhost",
      "LOCALHOST",
      "::1",
      "[::1]",
      "0:0:0:0:0:0:0:1",
    ]) {
      expect(isLoopbackHost(host), host).toBe(true);
      expect(adminTokenRequired({ host }), host).toBe(true);
      expect(adminTokenRequired({ host, openAdmin: true }), host).toBe(false);
      expect(adminTokenRequired({ host, openAdmin: true, adminToken: "t" }), host).toBe(true);
    }
    for (const host of [
      "0.0.0.0",
      "::",
      "192.168.1.20",
      "10.0.0.1",
      "emulator",
      "example.com",
      "::ffff:10.0.0.1",
      "128.0.0.1",
    ]) {
      expect(isLoopbackHost(host), host).toBe(false);
      expect(adminTokenRequired({ host }), host).toBe(true);
      expect(adminTokenRequired({ host, openAdmin: true }), host).toBe(true);
    }
  });

  it("is printed at start by the CLI without any flag, and the admin API refuses requests without it", async () => {
    const emulator = startEmulatorChild(["--people", "5"], {
      RECRUIT_SYNC_EMULATOR_ADMIN_TOKEN: "",
    });
    children.push(emulator.child);
    const out = await emulator.banner();
    const origin = /Admin API: (http:\/\/\S+)\/__emulator/.exec(out)?.[1];
    const token = /Admin token: (\S+)/.exec(out)?.[1];
    expect(origin).toBeDefined();
    expect(token).toMatch(/^emu_admin_/);
    expect((await admin(origin ?? "", "/clock")).status).toBe(401);
    expect((await admin(origin ?? "", "/snapshot")).status).toBe(401);
    expect((await admin(origin ?? "", "/clock", { authorization: `Bearer ${token}` })).status).toBe(200);
    expect((await admin(origin ?? "", "/snapshot", { authorization: `Bearer ${token}` })).status).toBe(200);
  });

  it("is off with --open-admin, which the CLI says in its banner", async () => {
    const emulator = startEmulatorChild(["--people", "5", "--open-admin"], {
      RECRUIT_SYNC_EMULATOR_ADMIN_TOKEN: "",
    });
    children.push(emulator.child);
    const out = await emulator.banner();
    expect(out).toContain("(open: --open-admin, loopback only)");
    expect(out).not.toContain("Admin token:");
    const origin = /Admin API: (http:\/\/\S+)\/__emulator/.exec(out)?.[1] ?? "";
    expect((await admin(origin, "/clock")).status).toBe(200);
  });

  it("takes the admin token from RECRUIT_SYNC_EMULATOR_ADMIN_TOKEN", async () => {
    const emulator = startEmulatorChild(["--people", "5"], {
      RECRUIT_SYNC_EMULATOR_ADMIN_TOKEN: "from-the-environment",
    });
    children.push(emulator.child);
    const out = await emulator.banner();
    const origin = /Admin API: (http:\/\/\S+)\/__emulator/.exec(out)?.[1] ?? "";
    expect(out).toContain("Admin token: from-the-environment");
    expect((await admin(origin, "/clock")).status).toBe(401);
    expect((await admin(origin, "/clock", { authorization: "Bearer from-the-environment" })).status).toBe(
      200,
    );
  });
});
