import { existsSync, statSync } from "node:fs";
import path from "node:path";
import { createBullBoard } from "@bull-board/api";
import { BullMQAdapter } from "@bull-board/api/bullMQAdapter";
import { FastifyAdapter } from "@bull-board/fastify";
import type { FastifyInstance } from "fastify";
import type { Cluster, Redis } from "ioredis";
import type { Logger } from "pino";
import type { RuntimeConfig } from "../config/index.ts";
import { describeProblems } from "../errors/index.ts";
import { parseJobData, QUEUE_NAMES, type Queues } from "../queue/index.ts";
import { readInvalidDefinitions } from "../queue/schedulers.ts";
import { allowedImportFile, isWatchedFolder } from "../runtime/import-file-access.ts";
import { resolveExportDefinition, resolveImportDefinition } from "../runtime/index.ts";
import { checkDefinitionGrant, checkWarehouseOverride } from "../runtime/warehouse-grant.ts";
import { JOB_DATA_SCHEMAS, jobDataJsonSchemas, type QueueName } from "./job-data-schemas.ts";

export const DASHBOARD_PATH = "/ui";

/**
 * On every answer under /ui, as the console page has them: bull-board's own
 * scripts, styles and API only, no framing (no clickjacking of its retry and
 * remove buttons). Inline styles stay allowed: bull-board's page and its JSON
 * editor set them. Its Google Fonts stylesheet is left out (the page falls
 * back to the system's fonts), so the dashboard makes no request elsewhere.
 */
export const DASHBOARD_HEADERS = {
  "content-security-policy":
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; object-src 'none'; frame-ancestors 'none'; form-action 'self'; base-uri 'self'",
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
};

/**
 * The job definitions the workers' last reconcile found invalid, as one line
 * for the queues' descriptions: the dashboard is where ops look at 2 am.
 * Refreshed before each dashboard request (one HGETALL).
 */
function invalidDefinitionsNote(redis: Redis | Cluster, prefix: string) {
  let note = "";
  return {
    get text() {
      return note;
    },
    async refresh() {
      const found = Object.values(await readInvalidDefinitions(redis, prefix).catch(() => ({})));
      note = found.length
        ? ` — INVALID in jobs/: ${found
            .map(
              (d) =>
                `${path.basename(d.file)}${d.scheduleKept ? " (its schedule runs with the last valid definition)" : ""}`,
            )
            .join(", ")}; run 'recruit-sync jobs validate'`
        : "";
    },
  };
}

/** A queue whose description carries the invalid definitions' note. */
class NotedAdapter extends BullMQAdapter {
  readonly #note: { readonly text: string };
  constructor(
    queue: ConstructorParameters<typeof BullMQAdapter>[0],
    note: { readonly text: string },
    options: ConstructorParameters<typeof BullMQAdapter>[1],
  ) {
    super(queue, options);
    this.#note = note;
  }
  override getDescription(): string {
    return `${super.getDescription()}${this.#note.text}`;
  }
}

/** bull-board's routes that write a job's data: what the workers will parse, checked before it is stored. */
const DATA_ROUTES: Record<string, (body: Record<string, unknown>) => unknown> = {
  "/api/queues/:queueName/add": (body) => body.data,
  "/api/queues/:queueName/:jobId/update-data": (body) => body.jobData,
};

/**
 * Why a job data from the dashboard would fail, as the worker would find it:
 * the schema (every problem with its path), then the definition it names and,
 * for an import, the file. Undefined when it would run.
 */
async function refusal(config: RuntimeConfig, queue: QueueName, data: unknown): Promise<string | undefined> {
  const parsed = parseJobData(JOB_DATA_SCHEMAS[queue], data);
  if (!parsed.ok) return `invalid job data: ${describeProblems(parsed.problems)}`;
  try {
    if (parsed.data.kind === "import") {
      // Refused before its existence is told: the worker reads only under the import roots (or a CLI's grant).
      if (!parsed.data.watched) {
        await allowedImportFile(config, parsed.data.file, { by: "queue", grant: parsed.data.fileGrant });
      } else if (!(await isWatchedFolder(config, parsed.data.watched.folder))) {
        return `watched.folder: ${parsed.data.watched.folder} is not one of the configuration's watch: folders`;
      }
      // A watched file is in the folder's processing/ when the worker takes it, not at `file`.
      if (!parsed.data.watched && !(existsSync(parsed.data.file) && statSync(parsed.data.file).isFile())) {
        return `file: no such file on this machine: ${parsed.data.file} (the workers must see the same path)`;
      }
      await resolveImportDefinition(parsed.data, config.paths.jobsDir);
    } else {
      if (parsed.data.definition) {
        checkDefinitionGrant(config, parsed.data.definition, parsed.data.definitionGrant);
      }
      if (parsed.data.incentiveIdsFile !== undefined) {
        const grant = parsed.data.incentiveIdsGrant;
        await allowedImportFile(config, parsed.data.incentiveIdsFile, { by: "queue", grant });
      }
      const definition = await resolveExportDefinition(parsed.data, config.paths.jobsDir);
      if (parsed.data.warehouse !== undefined) {
        checkWarehouseOverride(
          config,
          { warehouse: parsed.data.warehouse, grant: parsed.data.warehouseGrant },
          [definition.sink, config.warehouse.url],
        );
      }
    }
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
  return undefined;
}

/**
 * bull-board 9 on the two queues at /ui: jobs by state, retry, promote,
 * clean, the Schedulers page, and "add job" with a form prefilled and checked
 * from the job-data schemas. A job data the workers would refuse is refused
 * here with 400 and every problem, instead of becoming a failed job.
 */
export async function registerDashboard(
  app: FastifyInstance,
  options: {
    config: RuntimeConfig;
    queues: Queues;
    redis: Redis | Cluster;
    logger: Logger;
    /** The alerts queue (deliveries; the failed ones are what ops look at), when alerts run. */
    alertsQueue?: ConstructorParameters<typeof BullMQAdapter>[0] | undefined;
  },
): Promise<void> {
  const { config, queues, redis, logger } = options;
  const schemas = await jobDataJsonSchemas(config);
  const serverAdapter = new FastifyAdapter();
  serverAdapter.setBasePath(DASHBOARD_PATH);
  const invalid = invalidDefinitionsNote(redis, config.redis.prefix);
  createBullBoard({
    queues: [
      new NotedAdapter(queues.imports, invalid, {
        description: "CSV and CRM files into the service",
        jobDataSchema: schemas.imports,
      }),
      new NotedAdapter(queues.exports, invalid, {
        description: "the service into the warehouse",
        jobDataSchema: schemas.exports,
      }),
      ...(options.alertsQueue
        ? [
            new BullMQAdapter(options.alertsQueue, {
              description: "alert deliveries, one job per alert and channel",
            }),
          ]
        : []),
    ],
    serverAdapter,
    options: {
      uiConfig: { boardTitle: "recruit-sync", hideDocsLink: true },
      handlerHooks: {
        async before({ route, request }) {
          await invalid.refresh();
          const pick = DATA_ROUTES[route];
          const queue = request.params.queueName;
          if (!pick || (queue !== QUEUE_NAMES.imports && queue !== QUEUE_NAMES.exports)) return;
          const body = (
            typeof request.body === "object" && request.body !== null ? request.body : {}
          ) as Record<string, unknown>;
          const why = await refusal(config, queue, pick(body));
          if (!why) return;
          logger.info({ queue, route }, "dashboard: job data refused");
          return { allow: false, status: 400, errorKey: "ERRORS.INVALID_REQUEST_BODY", message: why };
        },
      },
    },
  });
  await app.register(async (scope) => {
    scope.addHook("onSend", async (_request, reply, payload) => {
      reply.headers(DASHBOARD_HEADERS);
      return payload;
    });
    await scope.register(serverAdapter.registerPlugin(), { prefix: DASHBOARD_PATH });
  });
}
