import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { parse as parseYaml } from "yaml";
import { ConfigError } from "../errors/index.ts";
import { problemsOf } from "../errors/problems.ts";
import { anchorWarehouseUrl } from "../sinks/warehouse-url.ts";
import { RuntimeConfig } from "./runtime-config.ts";
import { describeYamlError } from "./yaml-error.ts";

export interface LoadConfigOptions {
  /**
   * Folder holding default.yaml and <NODE_ENV>.yaml; default
   * RECRUIT_SYNC_CONFIG_DIR (the CLI's --config), else ./config under cwd.
   */
  configDir?: string;
  env?: NodeJS.ProcessEnv;
  /** Values that win over everything else (CLI flags). */
  overrides?: DeepPartial<RuntimeConfig>;
}

type DeepPartial<T> = { [K in keyof T]?: T[K] extends object ? DeepPartial<T[K]> : T[K] };
type Tree = Record<string, unknown>;

/** The package's own config/default.yaml: every setting with its default, commented. */
export const SHIPPED_DEFAULTS = path.resolve(import.meta.dirname, "../../config/default.yaml");

function isTree(v: unknown): v is Tree {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function merge(base: Tree, over: Tree): Tree {
  const out: Tree = { ...base };
  for (const [k, v] of Object.entries(over)) {
    if (v === undefined) continue;
    const current = out[k];
    out[k] = isTree(current) && isTree(v) ? merge(current, v) : v;
  }
  return out;
}

function readYaml(file: string): Tree {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? String(err);
    throw new ConfigError(`${file}: cannot be read (${code})`, [], { cause: err });
  }
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw new ConfigError(`${file}: ${describeYamlError(err, text)}`, [], { cause: err });
  }
  if (doc === null || doc === undefined) return {};
  if (!isTree(doc)) throw new ConfigError(`${file}: the top level must be a mapping`);
  return doc;
}

/**
 * Relative paths in a config file mean "from the project": the folder that
 * holds the config folder. So `jobsDir: ./jobs` finds the jobs whatever the
 * current directory, and a nightly cron needs no `cd`.
 */
function anchorPaths(doc: Tree, base: string): Tree {
  const out: Tree = { ...doc };
  if (isTree(doc.paths)) {
    const paths: Tree = { ...doc.paths };
    for (const key of ["jobsDir", "dataDir"]) {
      const v = paths[key];
      if (typeof v === "string" && v !== "") paths[key] = path.resolve(base, v);
    }
    out.paths = paths;
  }
  if (isTree(doc.warehouse) && typeof doc.warehouse.url === "string") {
    out.warehouse = { ...doc.warehouse, url: anchorWarehouseUrl(doc.warehouse.url, base) };
  }
  if (isTree(doc.imports) && Array.isArray(doc.imports.roots)) {
    const roots = doc.imports.roots.map((r) =>
      typeof r === "string" && r !== "" ? path.resolve(base, r) : r,
    );
    out.imports = { ...doc.imports, roots };
  }
  if (Array.isArray(doc.watch)) {
    out.watch = doc.watch.map((w) =>
      isTree(w) && typeof w.folder === "string" ? { ...w, folder: path.resolve(base, w.folder) } : w,
    );
  }
  return out;
}

/** Secrets in a file end up in backups and commits; refuse them outright. */
function refuseSecrets(file: string, doc: Tree): void {
  const service = doc.service;
  if (isTree(service) && "token" in service) {
    throw new ConfigError(`${file}: service.token must not be in a file; set RECRUIT_SYNC_API_TOKEN instead`);
  }
  if (isTree(doc.alerts) && "secrets" in doc.alerts) {
    throw new ConfigError(
      `${file}: alerts.secrets must not be in a file; set RECRUIT_SYNC_ALERTS_WEBHOOK_SECRET and RECRUIT_SYNC_ALERTS_SMTP_PASSWORD instead`,
    );
  }
  if (isTree(doc.ops) && "password" in doc.ops) {
    throw new ConfigError(
      `${file}: ops.password must not be in a file; set RECRUIT_SYNC_OPS_PASSWORD instead`,
    );
  }
}

/**
 * Loads the shipped defaults (the package's config/default.yaml), then the
 * config folder's default.yaml, then its <NODE_ENV>.yaml, then the environment
 * (RECRUIT_SYNC_BASE_URL, RECRUIT_SYNC_API_TOKEN, REDIS_URL,
 * RECRUIT_SYNC_WAREHOUSE, LOG_LEVEL, RECRUIT_SYNC_OPS_HOST, RECRUIT_SYNC_OPS_PORT,
 * RECRUIT_SYNC_OPS_PASSWORD, RECRUIT_SYNC_OPS_PROBE_HOST, RECRUIT_SYNC_OPS_PROBE_PORT,
 * RECRUIT_SYNC_ALERTS_WEBHOOK_SECRET, RECRUIT_SYNC_ALERTS_SMTP_PASSWORD), then `overrides`; validates the result.
 *
 * @example
 * const config = loadConfig();
 * const client = createClient({ baseUrl: config.service.baseUrl, token: config.service.token ?? "" });
 */
export function loadConfig(options: LoadConfigOptions = {}): RuntimeConfig {
  const env = options.env ?? process.env;
  const given = options.configDir ?? (env.RECRUIT_SYNC_CONFIG_DIR || undefined);
  const dir = path.resolve(given ?? "config");
  if (!existsSync(dir)) {
    throw new ConfigError(
      given
        ? `no configuration folder at ${dir}: give --config DIR (or RECRUIT_SYNC_CONFIG_DIR) a folder holding default.yaml`
        : `no configuration folder: looked for ${dir}; run from the project folder or give --config DIR (or RECRUIT_SYNC_CONFIG_DIR)`,
    );
  }
  const base = path.dirname(dir);
  // The shipped defaults first, anchored to the user's project: a config folder holds only what differs.
  let tree: Tree = anchorPaths(readYaml(SHIPPED_DEFAULTS), base);
  const files = [path.join(dir, "default.yaml")];
  if (env.NODE_ENV) files.push(path.join(dir, `${env.NODE_ENV}.yaml`));
  for (const file of files) {
    if (!existsSync(file)) continue;
    const doc = readYaml(file);
    refuseSecrets(file, doc);
    tree = merge(tree, anchorPaths(doc, base));
  }
  tree = merge(tree, {
    service: {
      baseUrl: env.RECRUIT_SYNC_BASE_URL || undefined,
      token: env.RECRUIT_SYNC_API_TOKEN || undefined,
    },
    redis: { url: env.REDIS_URL || undefined },
    warehouse: { url: env.RECRUIT_SYNC_WAREHOUSE || undefined },
    log: { level: env.LOG_LEVEL || undefined },
    alerts: {
      secrets: {
        webhook: env.RECRUIT_SYNC_ALERTS_WEBHOOK_SECRET || undefined,
        smtpPassword: env.RECRUIT_SYNC_ALERTS_SMTP_PASSWORD || undefined,
      },
    },
    ops: {
      host: env.RECRUIT_SYNC_OPS_HOST || undefined,
      port: env.RECRUIT_SYNC_OPS_PORT ? Number(env.RECRUIT_SYNC_OPS_PORT) : undefined,
      password: env.RECRUIT_SYNC_OPS_PASSWORD || undefined,
      probeHost: env.RECRUIT_SYNC_OPS_PROBE_HOST || undefined,
      probePort: env.RECRUIT_SYNC_OPS_PROBE_PORT ? Number(env.RECRUIT_SYNC_OPS_PROBE_PORT) : undefined,
    },
  });
  if (options.overrides) tree = merge(tree, options.overrides as Tree);
  const parsed = RuntimeConfig.safeParse(tree);
  if (!parsed.success) {
    const issues = problemsOf(parsed.error);
    const first = issues[0];
    throw new ConfigError(
      `invalid configuration at ${first?.path || "(top)"}: ${first?.message} (config/*.yaml or the environment)`,
      issues,
    );
  }
  return parsed.data;
}
