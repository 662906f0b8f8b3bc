import { type ChildProcess, execFile, spawn } from "node:child_process";
import {
  appendFileSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bundlePage } from "../../src/ops/console/page-bundle.ts";
import { launchChromium } from "../helpers/chromium.ts";
import { REDIS_URL } from "../helpers/env.ts";
import { type TestRedis, withTestRedis } from "../helpers/redis.ts";
import { PASSWORD } from "./ops-fixture.ts";

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, "../..");
/** Appended to the built script, to tell the served file from a bundle made at start. */
const MARK = "\n/* as dist/ shipped it */\n";

interface Served {
  url: string;
  process: ChildProcess;
}

/** `recruit-sync ops --port 0` of the copy, in `cwd`; resolves once it prints its address. */
function startOps(bin: string, cwd: string, env: NodeJS.ProcessEnv = {}): Promise<Served> {
  const child = spawn(process.execPath, [bin, "ops", "--port", "0"], {
    cwd,
    env: { ...process.env, NODE_ENV: "", RECRUIT_SYNC_OPS_PASSWORD: PASSWORD, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  return new Promise((resolve, reject) => {
    let out = "";
    let err = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const m = /dashboard (http:\/\/[^/\s]+)\//.exec(out);
      if (m?.[1]) resolve({ url: m[1], process: child });
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      err += chunk.toString();
    });
    child.on("exit", (code) => reject(new Error(`recruit-sync ops exited ${code}: ${err || out}`)));
  });
}

async function stop(served: Served | undefined): Promise<void> {
  if (!served || served.process.exitCode !== null) return;
  const exited = new Promise((resolve) => served.process.once("exit", resolve));
  served.process.kill("SIGTERM");
  await exited;
}

const AUTH = { authorization: `Basic ${Buffer.from(`ops:${PASSWORD}`).toString("base64")}` };

describe("the console's page from a built dist/", () => {
  // A copy of what the build and the bin read, so that building leaves the repository's own dist/ alone.
  let copy: string;
  let project: string;
  let redis: TestRedis;
  let compiled: Served | undefined;
  let browser: Browser | undefined;

  beforeAll(async () => {
    copy = mkdtempSync(path.join(tmpdir(), "console-dist-"));
    for (const part of ["bin", "scripts", "src", "config", "package.json", "tsconfig.json"]) {
      cpSync(path.join(ROOT, part), path.join(copy, part), { recursive: true });
    }
    symlinkSync(path.join(ROOT, "node_modules"), path.join(copy, "node_modules"));
    await run(process.execPath, [path.join(copy, "scripts/build-dist.mjs")], { cwd: copy });
    redis = await withTestRedis();
    project = mkdtempSync(path.join(tmpdir(), "console-dist-project-"));
    mkdirSync(path.join(project, "config"));
    writeFileSync(
      path.join(project, "config/default.yaml"),
      `redis: { url: ${REDIS_URL}, prefix: ${redis.prefix} }\npaths: { dataDir: ./data }\nops: { host: 127.0.0.1 }\n`,
    );
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await stop(compiled);
    await redis?.cleanup();
    if (project) rmSync(project, { recursive: true, force: true });
    if (copy) rmSync(copy, { recursive: true, force: true });
  });

  it("ships the page's script built, without its sources, and the compiled server serves that file", {
    timeout: 120_000,
  }, async () => {
    const shipped = path.join(copy, "dist/ops/console/console.js");
    const built = readFileSync(shipped, "utf8");
    // The same recipe as the server's from the sources: the same script.
    expect(built).toBe((await bundlePage()).code);
    expect(() => readFileSync(path.join(copy, "dist/ops/console/page/main.js"))).toThrow();
    appendFileSync(shipped, MARK);

    compiled = await startOps(path.join(copy, "bin/recruit-sync.mjs"), project);
    const script = await fetch(`${compiled.url}/console.js`, { headers: AUTH });
    expect(script.status).toBe(200);
    expect(await script.text()).toBe(`${built}${MARK}`);
    const style = await fetch(`${compiled.url}/ops-pages.css`, { headers: AUTH });
    expect(style.status).toBe(200);
  });

  it("runs in a browser: the page reads the budget and the recent runs through the shared schemas", {
    timeout: 60_000,
  }, async () => {
    if (!compiled) throw new Error("the compiled server did not start");
    browser = await launchChromium();
    const context = await browser.newContext({ httpCredentials: { username: "ops", password: PASSWORD } });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on("pageerror", (err) => errors.push(err.message));
    await page.goto(`${compiled.url}/`);
    // No token in this project: the budget line says so, and the runs table says none is kept.
    await expect
      .poll(() => page.locator("#budget").textContent(), { timeout: 20_000 })
      .toContain("no API token configured");
    expect(await page.locator("#recent-runs").textContent()).toContain("No finished run kept.");
    expect(await page.locator("#recent-runs thead").textContent()).toContain("Waited on the budget");
    expect(await page.locator("#queues-status").textContent()).toBe("");
    expect(errors).toEqual([]);
  });

  it("bundles the script from the sources when the bin runs them", { timeout: 120_000 }, async () => {
    const fromSources = await startOps(path.join(copy, "bin/recruit-sync.mjs"), project, {
      RECRUIT_SYNC_FROM_SOURCE: "1",
    });
    try {
      const script = await fetch(`${fromSources.url}/console.js`, { headers: AUTH });
      expect(await script.text()).toBe((await bundlePage()).code);
    } finally {
      await stop(fromSources);
    }
  });
});
