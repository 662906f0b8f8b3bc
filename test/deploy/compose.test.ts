import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import type { Command } from "commander";
import { beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { buildProgram } from "../../src/cli/main.ts";
import { loadConfig, readJobFile } from "../../src/config/index.ts";

/**
 * No container engine runs here, so the deployment is checked by reading it:
 * docker-compose.yml, the Dockerfile, .dockerignore, config/docker.yaml and the
 * commands docs/deploy.md tells people to run, against the CLI and the config
 * as they are in this checkout.
 */

const ROOT = path.resolve(".");
const read = (file: string) => readFileSync(path.join(ROOT, file), "utf8");

interface PortSpec {
  target?: number | string;
  published?: number | string;
  host_ip?: string;
}
interface Service {
  image?: string;
  build?: unknown;
  command?: string[] | string;
  environment?: Record<string, string | number | null> | string[];
  ports?: (string | PortSpec)[];
  expose?: (string | number)[];
  profiles?: string[];
  depends_on?: string[] | Record<string, { condition?: string; required?: boolean }>;
  deploy?: { replicas?: number | string };
  container_name?: string;
  volumes?: (string | { type?: string; source?: string; target?: string })[];
  healthcheck?: { disable?: boolean };
}
interface Compose {
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
}

const compose = parseYaml(read("docker-compose.yml"), { merge: true }) as Compose;
const services = Object.entries(compose.services);
/** Services that run our image: their command is a recruit-sync command line. */
const ours = services.filter(([, s]) => s.build !== undefined || s.image?.startsWith("recruit-sync"));

/**
 * Compose's interpolation, enough for this file: ${VAR}, ${VAR:-default},
 * ${VAR-default}, ${VAR:?error}, ${VAR?error}, nested. Unset → "".
 */
function interpolate(text: string, env: Record<string, string> = {}): string {
  let out = "";
  let i = 0;
  while (i < text.length) {
    if (text.startsWith("$$", i)) {
      out += "$";
      i += 2;
      continue;
    }
    if (!text.startsWith("${", i)) {
      out += text[i];
      i++;
      continue;
    }
    let depth = 0;
    let j = i;
    for (; j < text.length; j++) {
      if (text.startsWith("${", j)) {
        depth++;
        j++;
      } else if (text[j] === "}" && --depth === 0) break;
    }
    const body = text.slice(i + 2, j);
    const m = /^([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([\s\S]*))?$/.exec(body);
    if (!m) throw new Error(`cannot read \${${body}}`);
    const [, name = "", op, rest = ""] = m;
    const value = env[name];
    if (op === ":-") out += value ? value : interpolate(rest, env);
    else if (op === "-") out += value ?? interpolate(rest, env);
    else out += value ?? "";
    i = j + 1;
  }
  return out;
}

/** The variables a value interpolates, with the default each falls back to (undefined: none). */
function interpolations(text: string): { name: string; op: string | undefined; rest: string }[] {
  const found: { name: string; op: string | undefined; rest: string }[] = [];
  const re = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])((?:[^{}]|\{[^{}]*\})*))?\}/g;
  for (const m of text.matchAll(re)) found.push({ name: m[1] ?? "", op: m[2], rest: m[3] ?? "" });
  return found;
}

function envOf(s: Service): Record<string, string> {
  if (Array.isArray(s.environment)) {
    return Object.fromEntries(
      s.environment.map((kv) => {
        const at = kv.indexOf("=");
        return at < 0 ? [kv, ""] : [kv.slice(0, at), kv.slice(at + 1)];
      }),
    );
  }
  return Object.fromEntries(Object.entries(s.environment ?? {}).map(([k, v]) => [k, String(v ?? "")]));
}

function listFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    return e.isDirectory() ? listFiles(full) : e.name.endsWith(".ts") ? [full] : [];
  });
}

/**
 * Every environment variable the code reads: `env.NAME`, `env["NAME"]`, and
 * the values of `export const …_ENV = {…}` tables (the emulator's).
 */
function envVarsReadBySrc(): Set<string> {
  const names = new Set<string>();
  for (const file of listFiles(path.join(ROOT, "src"))) {
    const text = readFileSync(file, "utf8");
    for (const m of text.matchAll(/\benv\.([A-Z][A-Z0-9_]*)\b/g)) names.add(m[1] as string);
    for (const m of text.matchAll(/\benv\[\s*["'`]([A-Z][A-Z0-9_]*)["'`]\s*\]/g)) names.add(m[1] as string);
    for (const table of text.matchAll(/export const [A-Z0-9_]*_ENV\b[^=]*=\s*\{([\s\S]*?)\}/g)) {
      for (const m of (table[1] ?? "").matchAll(/["']([A-Z][A-Z0-9_]+)["']/g)) names.add(m[1] as string);
    }
  }
  return names;
}

interface Instruction {
  keyword: string;
  args: string;
}

/** The Dockerfile's instructions, continuation lines joined, comments dropped. */
function dockerfile(): Instruction[] {
  const lines = read("Dockerfile").split("\n");
  const out: Instruction[] = [];
  let current = "";
  for (const raw of lines) {
    const line = raw.trimEnd();
    if (current === "" && (line.trim().startsWith("#") || line.trim() === "")) continue;
    if (line.trim().startsWith("#")) continue;
    if (line.endsWith("\\")) {
      current += `${line.slice(0, -1)} `;
      continue;
    }
    current += line;
    const m = /^\s*([A-Za-z]+)\s+([\s\S]*)$/.exec(current);
    if (m) out.push({ keyword: (m[1] as string).toUpperCase(), args: (m[2] as string).trim() });
    current = "";
  }
  return out;
}

/** `["a", "b"]` or `a b`. */
function words(args: string): string[] {
  const trimmed = args.trim();
  if (trimmed.startsWith("[")) return JSON.parse(trimmed) as string[];
  return trimmed.split(/\s+/);
}

/** `KEY=value KEY2=value` (values without spaces, as ours are). */
function envInstruction(args: string): Record<string, string> {
  return Object.fromEntries(
    args
      .split(/\s+/)
      .filter((w) => w.includes("="))
      .map((w) => [w.slice(0, w.indexOf("=")), w.slice(w.indexOf("=") + 1)]),
  );
}

function dockerignore(): RegExp[] {
  return read(".dockerignore")
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("#") && !l.startsWith("!"))
    .map((p) => new RegExp(`^${p.replace(/[.+^$()|[\]\\]/g, "\\$&").replace(/\*/g, "[^/]*")}(/|$)`));
}

/**
 * Checks a command line (what follows `recruit-sync`) against the program:
 * each word is a subcommand, an option of that command or one above it (with
 * its value), or an argument the command takes. Returns what is wrong.
 */
function checkCommandLine(program: Command, argv: string[]): string[] {
  const problems: string[] = [];
  const chain: Command[] = [program];
  let cmd = program;
  let ranCommand = false;
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i] as string;
    if (word.startsWith("-")) {
      const flag = word.split("=")[0] as string;
      if (flag === "--help" || flag === "-h") continue;
      const option = chain.flatMap((c) => c.options).find((o) => o.long === flag || o.short === flag);
      if (!option) {
        problems.push(`${argv.join(" ")}: ${cmd.name()} has no option ${flag}`);
        continue;
      }
      if ((option.required || option.optional) && !word.includes("=")) i++;
      continue;
    }
    const sub = cmd.commands.find((c) => c.name() === word || c.aliases().includes(word));
    if (sub) {
      cmd = sub;
      chain.push(sub);
      continue;
    }
    if (cmd.registeredArguments.length === 0) {
      problems.push(
        `${argv.join(" ")}: ${cmd === program ? "recruit-sync" : cmd.name()} has no command ${word}`,
      );
    }
    ranCommand = true;
  }
  if (cmd === program && problems.length === 0) problems.push(`${argv.join(" ")}: names no command`);
  else if (cmd.commands.length > 0 && !ranCommand && cmd.registeredArguments.length === 0) {
    problems.push(`${argv.join(" ")}: ${cmd.name()} needs a subcommand`);
  }
  return problems;
}

/** `docker compose run --rm SERVICE ARGS…` lines of docs/deploy.md, for our services. */
function documentedRuns(): { service: string; argv: string[] }[] {
  const doc = read("docs/deploy.md");
  const runs: { service: string; argv: string[] }[] = [];
  const re =
    /docker compose(?: --profile \S+)* run --rm ((?:--?\S+ (?:\S+ )?)*?)?([a-z][a-z0-9-]*)((?: [^\s`#|]+)*)/g;
  for (const m of doc.matchAll(re)) {
    const service = m[2] as string;
    if (!ours.some(([name]) => name === service)) continue;
    runs.push({ service, argv: (m[3] ?? "").trim().split(/\s+/).filter(Boolean) });
  }
  return runs;
}

describe("docker-compose.yml runs only what the CLI has", () => {
  let program: Command;
  beforeAll(() => {
    program = buildProgram();
  });

  it("runs our image in the worker, ops and emulator services", () => {
    expect(ours.map(([name]) => name).sort()).toEqual(["emulator", "ops", "worker"]);
  });

  it("gives every service of our image a command the CLI knows, options included", () => {
    const problems = ours.flatMap(([name, s]) => {
      const argv = Array.isArray(s.command) ? s.command : (s.command ?? "").split(/\s+/).filter(Boolean);
      return argv.length ? checkCommandLine(program, argv).map((p) => `${name}: ${p}`) : [];
    });
    expect(problems).toEqual([]);
  });

  it("starts the image's default command (CMD after the ENTRYPOINT) as a CLI command", () => {
    const instructions = dockerfile();
    const entrypoint = words(instructions.findLast((i) => i.keyword === "ENTRYPOINT")?.args ?? "[]");
    expect(entrypoint).toEqual(["node", "bin/recruit-sync.mjs"]);
    const cmd = words(instructions.findLast((i) => i.keyword === "CMD")?.args ?? "[]");
    expect(cmd.length).toBeGreaterThan(0);
    expect(checkCommandLine(program, cmd)).toEqual([]);
  });

  it("tells people in docs/deploy.md to run only commands the CLI has", () => {
    const runs = documentedRuns();
    expect(runs.length).toBeGreaterThan(0);
    const problems = runs.flatMap((r) => checkCommandLine(program, r.argv).map((p) => `${r.service}: ${p}`));
    expect(problems).toEqual([]);
  });

  it("finds a wrong command: the check itself can fail", () => {
    expect(checkCommandLine(program, ["wrker"])).not.toEqual([]);
    expect(checkCommandLine(program, ["worker", "--no-such-flag"])).not.toEqual([]);
    expect(checkCommandLine(program, ["jobs"])).not.toEqual([]);
    expect(checkCommandLine(program, ["jobs", "validate", "--dir", "/x"])).toEqual([]);
  });
});

describe("the environment it sets", () => {
  const read = envVarsReadBySrc();

  it("sets only variables the code reads, in compose and in the Dockerfile", () => {
    const set = [
      ...ours.flatMap(([name, s]) => Object.keys(envOf(s)).map((k) => ({ where: name, name: k }))),
      ...dockerfile()
        .filter((i) => i.keyword === "ENV")
        .flatMap((i) => Object.keys(envInstruction(i.args)).map((k) => ({ where: "Dockerfile", name: k }))),
    ];
    expect(set.length).toBeGreaterThan(0);
    expect(set.filter((v) => !read.has(v.name))).toEqual([]);
  });

  it("knows the variables the configuration reads (the check itself can fail)", () => {
    for (const name of [
      "RECRUIT_SYNC_API_TOKEN",
      "RECRUIT_SYNC_BASE_URL",
      "REDIS_URL",
      "RECRUIT_SYNC_WAREHOUSE",
    ]) {
      expect(read.has(name)).toBe(true);
    }
    expect(read.has("RECRUIT_SYNC_API_TOKN")).toBe(false);
  });

  it("has no well-known secret: tokens and passwords come from the environment with no default", () => {
    const problems: string[] = [];
    for (const [name, s] of services) {
      for (const [key, value] of Object.entries(envOf(s))) {
        if (/TOKEN|PASSWORD|SECRET/.test(key)) {
          const refs = interpolations(value);
          const only = refs.length === 1 && value.startsWith("${") && value.endsWith("}");
          const defaulted = refs.some((r) => r.op?.endsWith("-") && r.rest !== "");
          if (!only || defaulted) problems.push(`${name}.${key}: ${value}`);
        }
        // A URL's password is interpolated too, never written out.
        for (const m of value.matchAll(/:\/\/[^:@/\s]+:([^@\s]+)@/g)) {
          if (!(m[1] as string).startsWith("${")) problems.push(`${name}.${key}: a password in a URL`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it("requires the service's address and token rather than falling back to the emulator", () => {
    for (const [name, s] of ours.filter(([n]) => n !== "emulator")) {
      const env = envOf(s);
      for (const key of ["RECRUIT_SYNC_BASE_URL", "RECRUIT_SYNC_API_TOKEN"]) {
        expect(interpolations(env[key] ?? ""), `${name}.${key}`).toEqual([
          expect.objectContaining({ name: key, op: ":?" }),
        ]);
      }
    }
  });
});

describe("the services", () => {
  it("runs Redis with AOF and noeviction, as BullMQ needs", () => {
    const command = compose.services.redis?.command;
    const argv = Array.isArray(command) ? command : (command ?? "").split(/\s+/);
    const valueAfter = (flag: string) => argv[argv.indexOf(flag) + 1];
    expect(argv).toContain("--appendonly");
    expect(valueAfter("--appendonly")).toBe("yes");
    expect(valueAfter("--maxmemory-policy")).toBe("noeviction");
  });

  it("keeps the emulator behind a profile, with no published port", () => {
    const emulator = compose.services.emulator;
    expect(emulator?.profiles?.length).toBeGreaterThan(0);
    expect(emulator?.ports ?? []).toEqual([]);
  });

  it("starts with a plain `docker compose up`: no service depends on a profiled one unless optional", () => {
    const profiled = new Set(services.filter(([, s]) => s.profiles?.length).map(([n]) => n));
    const problems: string[] = [];
    for (const [name, s] of services) {
      if (s.profiles?.length) continue;
      const deps = Array.isArray(s.depends_on)
        ? s.depends_on.map((d) => [d, {}] as const)
        : Object.entries(s.depends_on ?? {});
      for (const [dep, spec] of deps) {
        if (!(dep in compose.services)) problems.push(`${name} depends on ${dep}, which is not a service`);
        else if (profiled.has(dep) && (spec as { required?: boolean }).required !== false) {
          problems.push(`${name} depends on the profiled ${dep}`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it("publishes only the ops port, on 127.0.0.1 unless told otherwise", () => {
    const published = services.filter(([, s]) => (s.ports ?? []).length > 0);
    expect(published.map(([n]) => n)).toEqual(["ops"]);
    for (const port of compose.services.ops?.ports ?? []) {
      expect(typeof port).toBe("object");
      const p = port as PortSpec;
      expect(interpolate(String(p.host_ip ?? ""))).toBe("127.0.0.1");
      expect(interpolate(String(p.host_ip ?? ""), { RECRUIT_SYNC_OPS_BIND: "0.0.0.0" })).toBe("0.0.0.0");
    }
  });

  it("lets the worker run as N replicas: deploy.replicas, no fixed name, no published port", () => {
    const worker = compose.services.worker as Service;
    expect(worker.deploy?.replicas).toBeDefined();
    expect(interpolate(String(worker.deploy?.replicas))).toMatch(/^\d+$/);
    expect(interpolate(String(worker.deploy?.replicas), { RECRUIT_SYNC_WORKERS: "3" })).toBe("3");
    expect(worker.container_name).toBeUndefined();
    expect(worker.ports ?? []).toEqual([]);
  });

  it("has no one-shot exporter left from before the worker", () => {
    expect(compose.services.exporter).toBeUndefined();
  });

  it("mounts named volumes that exist, and host folders that are in the repo", () => {
    const problems: string[] = [];
    for (const [name, s] of services) {
      for (const v of s.volumes ?? []) {
        const source = typeof v === "string" ? (v.split(":")[0] as string) : (v.source ?? "");
        if (source.startsWith(".") || source.startsWith("/")) {
          if (!existsSync(path.resolve(ROOT, source))) problems.push(`${name}: ${source} is not in the repo`);
        } else if (!(source in (compose.volumes ?? {}))) {
          problems.push(`${name}: volume ${source} is not declared`);
        }
      }
    }
    expect(problems).toEqual([]);
  });
});

describe("the Dockerfile", () => {
  const instructions = dockerfile();
  const stages = instructions.filter((i) => i.keyword === "FROM");
  const last = instructions.slice(instructions.lastIndexOf(stages.at(-1) as Instruction));

  it("builds in stages and installs production dependencies with npm ci --omit=dev", () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    expect(instructions.some((i) => i.keyword === "RUN" && /npm ci\b.*--omit=dev/.test(i.args))).toBe(true);
    // The image that runs installs nothing itself: it takes node_modules from an earlier stage.
    expect(last.some((i) => i.keyword === "COPY" && /--from=\S+.*node_modules/.test(i.args))).toBe(true);
    expect(last.some((i) => i.keyword === "RUN" && /\bnpm (ci|install)\b/.test(i.args))).toBe(false);
  });

  it("runs as a user other than root", () => {
    const user = last.findLast((i) => i.keyword === "USER")?.args;
    expect(user).toBeDefined();
    expect(["root", "0", "0:0"]).not.toContain(user);
  });

  it("checks health on the ops server's /healthz, at the port compose maps", () => {
    const health = last.find((i) => i.keyword === "HEALTHCHECK")?.args ?? "";
    expect(health).toContain("/healthz");
    const env = Object.assign(
      {},
      ...last.filter((i) => i.keyword === "ENV").map((i) => envInstruction(i.args)),
    ) as Record<string, string>;
    expect(health).toContain("RECRUIT_SYNC_OPS_PORT");
    const port = env.RECRUIT_SYNC_OPS_PORT;
    expect(port).toMatch(/^\d+$/);
    const targets = (compose.services.ops?.ports ?? []).map((p) => String((p as PortSpec).target));
    expect(targets).toEqual([port]);
    expect(env.RECRUIT_SYNC_OPS_HOST).toBe("0.0.0.0");
  });

  it("copies only files that are in the repo and not left out by .dockerignore", () => {
    const ignored = dockerignore();
    const problems: string[] = [];
    for (const i of instructions.filter((x) => x.keyword === "COPY" || x.keyword === "ADD")) {
      const parts = words(i.args).filter((w) => !w.startsWith("--"));
      if (/--from=/.test(i.args)) continue;
      for (const source of parts.slice(0, -1)) {
        if (!existsSync(path.join(ROOT, source))) problems.push(`${source} is not in the repo`);
        else if (ignored.some((re) => re.test(source)))
          problems.push(`${source} is left out by .dockerignore`);
      }
    }
    expect(instructions.filter((x) => x.keyword === "COPY").length).toBeGreaterThan(3);
    expect(problems).toEqual([]);
  });

  it("keeps secrets and personal data out of the build context", () => {
    const ignored = dockerignore();
    for (const p of [".env", "data", "node_modules", ".git", "data/warehouse.duckdb"]) {
      expect(
        ignored.some((re) => re.test(p)),
        p,
      ).toBe(true);
    }
  });
});

describe("config/docker.yaml, as the image reads it (NODE_ENV=docker)", () => {
  const env = {
    NODE_ENV: "docker",
    RECRUIT_SYNC_BASE_URL: "http://emulator:4010/api/public/v1",
    RECRUIT_SYNC_API_TOKEN: "t",
  };
  const config = loadConfig({ configDir: path.join(ROOT, "config"), env });
  const mounts = (service: string) =>
    (compose.services[service]?.volumes ?? []).map((v) => {
      const [source, target] = (typeof v === "string" ? v : `${v.source}:${v.target}`).split(":");
      return { source: source as string, target: target as string };
    });
  const volumeAt = (service: string, file: string) =>
    mounts(service)
      .filter((m) => file === m.target || file.startsWith(`${m.target}/`))
      .sort((a, b) => b.target.length - a.target.length)[0]?.source;

  it("is the NODE_ENV the Dockerfile sets", () => {
    const set = dockerfile()
      .filter((i) => i.keyword === "ENV")
      .map((i) => envInstruction(i.args).NODE_ENV)
      .find(Boolean);
    expect(set).toBe("docker");
    expect(statSync(path.join(ROOT, "config", "docker.yaml")).isFile()).toBe(true);
  });

  it("keeps the data, the watched folders and DuckDB in their volumes", () => {
    expect(volumeAt("worker", config.paths.dataDir)).toBe("data");
    expect(config.watch.length).toBeGreaterThan(0);
    for (const w of config.watch) expect(volumeAt("worker", w.folder), w.folder).toBe("inbox");
    expect(config.warehouse.url).toMatch(/^duckdb:\//);
    expect(volumeAt("worker", config.warehouse.url.slice("duckdb:".length))).toBe("duckdb");
  });

  it("watches folders whose jobs exist and import files", async () => {
    for (const w of config.watch) {
      const job = await readJobFile(path.join(config.paths.jobsDir, `${w.job}.yaml`));
      expect(job.ok, w.job).toBe(true);
      if (job.ok) expect(["import", "opt-out"]).toContain(job.definition.kind);
    }
  });
});
