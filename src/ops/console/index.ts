/**
 * The research-ops console: a page at `/` and its API, for a person to
 * upload a CSV, check and change the suggested mapping, preview it, run it
 * and save it as a job. See docs/console.md.
 */
import { createReadStream } from "node:fs";
import { readFile, rm } from "node:fs/promises";
import path from "node:path";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Redis } from "ioredis";
import type { Logger } from "pino";
import type { z } from "zod";
import type { RuntimeConfig } from "../../config/index.ts";
import type { Queues } from "../../queue/index.ts";
import { OpsHttpError } from "../ops-http-error.ts";
import type { RunQueued, UploadAnswer } from "./api-contract.ts";
import { budgetView } from "./budget-view.ts";
import {
  checkDefinition,
  PreviewBody,
  parseRequest,
  RejectsParams,
  RunBody,
  RunParams,
  SaveJobBody,
  UploadParams,
} from "./console-requests.ts";
import { multipartBoundary, receiveMultipartFile } from "./multipart-file.ts";
import { PAGE_SCRIPT, pageScript } from "./page-bundle.ts";
import { previewUpload } from "./preview-upload.ts";
import { readUploadSample } from "./read-upload.ts";
import { rejectsFileOf, runStatus } from "./run-status.ts";
import { enqueueUpload } from "./run-upload.ts";
import { requireSameOrigin } from "./same-origin.ts";
import { saveJob } from "./save-job.ts";
import { suggestForUpload } from "./suggest-upload.ts";
import { uploadQuota } from "./upload-quota.ts";
import { findUpload, newUpload, removeOldUploads, uploadsDir, writeUploadMeta } from "./upload-store.ts";

export { CONSOLE_HEADER } from "./same-origin.ts";
export { jobNameOf, type MappingSuggestion } from "./suggest-upload.ts";
export { removeOldUploads, uploadsDir } from "./upload-store.ts";

export interface ConsoleOptions {
  config: RuntimeConfig;
  queues: Queues;
  redis: Redis;
  logger: Logger;
}

const DAY_MS = 24 * 3600 * 1000;
/** A body this much over the limit is refused before a byte is read: multipart framing is far less. */
const FRAMING_ALLOWANCE = 1024 * 1024;

export const PAGE_HEADERS = {
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  // Scripts from this origin only (the page's own file); no framing, so no clickjacking.
  "content-security-policy":
    "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'; form-action 'none'; base-uri 'none'",
};

/** 2147483648 → "2.0 GB": what a person reads in the quota's refusal, with the exact bytes beside it. */
function sizeInWords(bytes: number): string {
  const units = ["bytes", "KB", "MB", "GB", "TB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${bytes} bytes` : `${value.toFixed(1)} ${units[unit]}`;
}

function quotaRefusal(usage: { usedBytes: number; quotaBytes: number }): OpsHttpError {
  return new OpsHttpError(
    507,
    "ops_upload_quota_full",
    `the uploads folder is full: this file would take it past ops.uploads.quotaBytes, ${sizeInWords(usage.quotaBytes)} (${usage.quotaBytes} bytes), and ${sizeInWords(usage.usedBytes)} (${usage.usedBytes} bytes) is in use; nothing of this file was kept. Free space by removing uploads no longer needed from <paths.dataDir>/uploads/ (each goes by itself after ops.uploads.keepDays), or raise ops.uploads.quotaBytes`,
  );
}

/** The look the console and the run history share, served beside them. */
const SHARED_STYLE = "ops-pages.css";

async function staticFile(name: string): Promise<string> {
  return readFile(path.join(import.meta.dirname, name), "utf8");
}

/**
 * Registers the console on the ops server: `GET /` (the page),
 * `POST /api/uploads`, `POST /api/uploads/:uploadId/preview`,
 * `POST /api/uploads/:uploadId/run`, `GET /api/runs/:queue/:jobId`,
 * `GET /api/runs/imports/:jobId/rejects.csv`, `GET /api/budget` and
 * `POST /api/jobs`; removes
 * uploads older than `ops.uploads.keepDays` now and daily.
 */
export async function registerConsole(app: FastifyInstance, options: ConsoleOptions): Promise<void> {
  const { config, queues, redis, logger } = options;
  const { maxBytes, keepDays, quotaBytes } = config.ops.uploads;
  const quota = uploadQuota(uploadsDir(config), quotaBytes);
  const [page, script, style] = await Promise.all([
    staticFile("console.html"),
    pageScript(),
    staticFile(SHARED_STYLE),
  ]);

  const sweep = () =>
    removeOldUploads(config, keepDays, logger).catch((err: Error) =>
      logger.warn({ err: err.message }, "ops console: old uploads could not be removed"),
    );
  await sweep();
  const daily = setInterval(sweep, DAY_MS);
  daily.unref();
  app.addHook("onClose", async () => clearInterval(daily));

  const needRedis = () => {
    if (redis.status !== "ready") {
      throw new OpsHttpError(
        503,
        "ops_redis_down",
        `Redis does not answer (connection ${redis.status}): the queues live there; see /readyz`,
      );
    }
  };
  /** True once the client has gone: a preview it no longer waits for stops. */
  const abortOnHangUp = (reply: FastifyReply) => {
    const controller = new AbortController();
    reply.raw.on("close", () => {
      if (!reply.raw.writableEnded) controller.abort(new Error("the client went away"));
    });
    return controller.signal;
  };

  await app.register(async (scope) => {
    // The upload's body is read as it streams (never whole into memory); other types reach the schemas.
    const unread = (
      _request: FastifyRequest,
      _payload: unknown,
      done: (err: null, body: undefined) => void,
    ) => done(null, undefined);
    scope.addContentTypeParser("multipart/form-data", unread);
    // Any other type reaches the handlers unread, so each route answers it in its own words.
    scope.addContentTypeParser("*", unread);

    scope.get("/", (_request, reply) =>
      reply.headers(PAGE_HEADERS).type("text/html; charset=utf-8").send(page),
    );
    scope.get(`/${PAGE_SCRIPT}`, (_request, reply) =>
      reply.headers(PAGE_HEADERS).type("text/javascript; charset=utf-8").send(script),
    );
    scope.get(`/${SHARED_STYLE}`, (_request, reply) =>
      reply.headers(PAGE_HEADERS).type("text/css; charset=utf-8").send(style),
    );

    scope.post("/api/uploads", async (request: FastifyRequest, reply) => {
      requireSameOrigin(request);
      const boundary = multipartBoundary(request.headers["content-type"]);
      if (!boundary) {
        throw new OpsHttpError(
          415,
          "ops_upload_not_csv",
          "send the CSV as multipart/form-data, in a field named file",
        );
      }
      const declared = Number(request.headers["content-length"] ?? 0);
      const tooLarge = () =>
        new OpsHttpError(
          413,
          "ops_upload_too_large",
          `the file is larger than ${maxBytes} bytes (ops.uploads.maxBytes): split it, or raise the limit`,
        );
      if (declared > maxBytes + FRAMING_ALLOWANCE) {
        reply.header("connection", "close");
        throw tooLarge();
      }
      const upload = await newUpload(config);
      const ticket = await quota.begin(upload.dir);
      let kept = false;
      try {
        const quotaFull = () => {
          reply.header("connection", "close");
          return quotaRefusal(ticket.usage());
        };
        // The file is at least its declared length less the framing: refused before a byte is read when that cannot fit.
        const used = ticket.usage().usedBytes;
        if (used >= quotaBytes || used + Math.max(0, declared - FRAMING_ALLOWANCE) > quotaBytes) {
          throw quotaFull();
        }
        const outcome = await receiveMultipartFile(request.raw, boundary, upload.file, {
          field: "file",
          maxBytes,
          take: (bytes) => ticket.take(bytes),
        });
        if (outcome.kind === "too-large") throw tooLarge();
        if (outcome.kind === "over-quota") throw quotaRefusal(ticket.usage());
        if (outcome.kind === "second-file") {
          throw new OpsHttpError(
            400,
            "ops_upload_second_file",
            "one file per upload: this request carries a second file, and neither was kept; upload each file on its own",
            [{ path: "file", message: "a single file, in the field named file" }],
          );
        }
        if (outcome.kind === "malformed") {
          throw new OpsHttpError(
            400,
            "ops_invalid_request",
            `the multipart body is malformed: ${outcome.reason}`,
          );
        }
        if (outcome.kind === "missing") {
          throw new OpsHttpError(400, "ops_invalid_request", "no file: send the CSV in a field named file", [
            { path: "file", message: "a multipart field named file holding the CSV" },
          ]);
        }
        const sample = await readUploadSample(upload.file);
        const { fileName, bytes } = outcome.file;
        let suggestion: Awaited<ReturnType<typeof suggestForUpload>> | null = null;
        let suggestionError: string | undefined;
        try {
          suggestion = await suggestForUpload(upload.file, fileName);
        } catch (err) {
          // The file is still worth mapping by hand.
          suggestionError =
            err instanceof Error ? err.message.replaceAll(upload.file, "the file") : String(err);
        }
        await writeUploadMeta(upload, {
          fileName: fileName ?? null,
          bytes,
          uploadedAt: new Date().toISOString(),
        });
        logger.info(
          {
            uploadId: upload.id,
            bytes,
            columns: sample.headers.length,
            encoding: sample.encoding,
            rejectsFile: sample.rejectsFile,
          },
          "ops console: file uploaded",
        );
        kept = true;
        const answer: z.input<typeof UploadAnswer> = {
          uploadId: upload.id,
          fileName: fileName ?? null,
          bytes,
          encoding: sample.encoding,
          delimiter: sample.delimiter,
          rejectsFile: sample.rejectsFile,
          headers: sample.headers,
          rows: sample.rows,
          suggestion,
          ...(suggestionError ? { suggestionError } : {}),
        };
        return reply.code(201).send(answer);
      } catch (err) {
        await rm(upload.dir, { recursive: true, force: true });
        throw err;
      } finally {
        ticket.end(kept);
      }
    });

    scope.post("/api/uploads/:uploadId/preview", async (request, reply) => {
      requireSameOrigin(request);
      const { uploadId } = parseRequest(UploadParams, request.params, "(params)");
      const body = parseRequest(PreviewBody, request.body, "(body)");
      checkDefinition(body.definition);
      const upload = await findUpload(config, uploadId, keepDays);
      const preview = await previewUpload(config, upload, body.definition, {
        logger,
        signal: abortOnHangUp(reply),
      });
      logger.info(
        { uploadId, rowsRead: preview.report.rowsRead, rejected: preview.report.rejected },
        "ops console: preview",
      );
      return preview;
    });

    scope.post("/api/uploads/:uploadId/run", async (request, reply) => {
      requireSameOrigin(request);
      const { uploadId } = parseRequest(UploadParams, request.params, "(params)");
      const body = parseRequest(RunBody, request.body, "(body)");
      const upload = await findUpload(config, uploadId, keepDays);
      needRedis();
      const enqueued = await enqueueUpload(config, queues, upload, body);
      logger.info(
        { uploadId, jobId: enqueued.jobId, dryRun: body.dryRun === true, duplicate: enqueued.duplicate },
        "ops console: import enqueued",
      );
      const answer: z.input<typeof RunQueued> = { ...enqueued, queue: "imports" };
      return reply.code(enqueued.duplicate ? 200 : 202).send(answer);
    });

    scope.get("/api/runs/:queue/:jobId", async (request) => {
      const { queue, jobId } = parseRequest(RunParams, request.params, "(params)");
      needRedis();
      return runStatus(config, queues, redis, queue, jobId);
    });

    scope.get("/api/budget", async () => {
      needRedis();
      return budgetView(config, queues, redis);
    });

    scope.get("/api/runs/imports/:jobId/rejects.csv", async (request, reply) => {
      const { jobId } = parseRequest(RejectsParams, request.params, "(params)");
      needRedis();
      const file = await rejectsFileOf(config, queues, jobId);
      return reply
        .headers({
          "content-type": "text/csv; charset=utf-8",
          "content-disposition": `attachment; filename="${jobId.replace(/[^A-Za-z0-9._-]/g, "_")}.rejects.csv"`,
          "cache-control": "no-store",
          "x-content-type-options": "nosniff",
        })
        .send(createReadStream(file));
    });

    scope.post("/api/jobs", async (request, reply) => {
      requireSameOrigin(request);
      const body = parseRequest(SaveJobBody, request.body, "(body)");
      const saved = await saveJob(config, body);
      logger.info({ job: saved.name, overwritten: saved.overwritten }, "ops console: job saved");
      return reply.code(saved.overwritten ? 200 : 201).send(saved);
    });
  });
}
