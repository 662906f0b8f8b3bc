import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OpsServer, startOpsServer } from "../../src/ops/index.ts";
import { DEFAULT_BRAKE_TIMINGS, wrongPasswordBrake } from "../../src/ops/wrong-password-brake.ts";
import { AUTH, basic, call, type OpsProject, withOpsProject } from "./ops-fixture.ts";

const WRONG_LINE = "ops: wrong user or password";

/** A request whose answer the test can look at later, and whether it has come yet. */
function pending(url: string, headers: Record<string, string>) {
  const state = { settled: false };
  const answer = call(url, { headers }).finally(() => {
    state.settled = true;
  });
  return {
    answer,
    get settled() {
      return state.settled;
    },
  };
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe("the ops server under a password guesser", () => {
  let project: OpsProject;
  let ops: OpsServer;
  const wrongLines = () =>
    project
      .logText()
      .split("\n")
      .filter((l) => l.includes(WRONG_LINE)).length;

  beforeAll(async () => {
    project = await withOpsProject();
    ops = await startOpsServer({ config: project.config, logger: project.logger, port: 0 });
  });
  afterAll(async () => {
    await ops?.close();
    await project?.cleanup();
  });

  it("answers the right password 200 at once after 50 wrong ones from the same address, and holds the wrong ones", async () => {
    const url = `${ops.url}/api/jobs`;
    // Fifty wrong tries at once, as a guesser behind the same TLS proxy as everyone would send them.
    const wrong = Array.from({ length: 50 }, (_, i) => pending(url, basic("ops", `guess-${i}`)));
    await until(() => wrongLines() >= 50, "the server to check all 50 wrong passwords");

    const right = await call(url, { headers: AUTH });
    expect(right.status).toBe(200);
    // The right one came back while the brake still holds the wrong ones past the five free tries.
    const held = wrong.filter((w) => !w.settled).length;
    expect(held).toBeGreaterThanOrEqual(40);

    // The right password reset nothing: another wrong try is held too.
    const after = pending(url, basic("ops", "one-more-guess"));
    await until(() => wrongLines() >= 51, "the server to check the 51st wrong password");
    expect(after.settled).toBe(false);
    // Counted per address and user: another user's first wrong try from the same address is a plain 401.
    const otherUser = await call(url, { headers: basic("someone-else", "typo") });
    expect(otherUser.status).toBe(401);
    expect(otherUser.body).toMatchObject({ error: "ops_unauthorized" });
    // The liveness probe is never held back.
    expect((await call(`${ops.url}/healthz`)).status).toBe(200);
    // And the right password is still answered at once.
    expect((await call(`${ops.url}/api/jobs`, { headers: AUTH })).status).toBe(200);

    // A closing server answers what it holds at once.
    await ops.close();
    const answers = await Promise.all([...wrong, after].map((w) => w.answer));
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 401)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(46);
    const braked = answers.find((a) => a.status === 429);
    expect(braked?.body).toMatchObject({
      error: "ops_too_many_wrong_passwords",
      message: expect.stringContaining("the right password is answered at once"),
    });
    expect(braked?.headers.get("www-authenticate")).toBeNull();
    // The password is never logged; the user and the address are.
    expect(project.logText()).not.toContain("guess-");
    expect(project.logText()).toContain('"user":"ops"');
  });
});

describe("wrongPasswordBrake", () => {
  it("holds each wrong try past the free ones longer, up to a minute, and forgets a quiet pair", () => {
    const brake = wrongPasswordBrake();
    const t = 1_000_000;
    const holds = Array.from({ length: 14 }, (_, i) => brake.wrong("10.0.0.1", "ops", t + i));
    expect(holds).toEqual([0, 0, 0, 0, 0, 1000, 2000, 4000, 8000, 16_000, 32_000, 60_000, 60_000, 60_000]);
    // Another user from the same address, and the same user from another address, start afresh.
    expect(brake.wrong("10.0.0.1", "admin", t)).toBe(0);
    expect(brake.wrong("10.0.0.2", "ops", t)).toBe(0);
    expect(brake.count("10.0.0.1", "ops", t + 20)).toBe(14);
    const quiet = t + 14 + DEFAULT_BRAKE_TIMINGS.forgetAfterMs + 1;
    expect(brake.count("10.0.0.1", "ops", quiet)).toBe(0);
    expect(brake.wrong("10.0.0.1", "ops", quiet)).toBe(0);
  });
});
