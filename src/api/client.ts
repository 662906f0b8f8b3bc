import type { Logger } from "pino";
import type { z } from "zod";
import type { ResetUnit } from "./decisions.ts";
import { SPEC_DEFAULTS } from "./decisions.ts";
import { type Endpoint, type Endpoints, endpoints, fillPath, type OperationId } from "./endpoints.ts";
import {
  ApiError,
  NotFoundApiError,
  RateLimitedApiError,
  UnexpectedResponseError,
  ValidationApiError,
} from "./errors.ts";
import { parseRateLimitHeaders, parseRetryAfter, type RateLimitInfo } from "./rate-limit-headers.ts";
import { backoffDelay, DEFAULT_RETRY, type RetryOptions, requestNeverSent } from "./retry-policy.ts";
import {
  type CustomIncentive,
  type DeletePropertiesResult,
  type EmailMessage,
  type ImportParticipantsInput,
  type ImportResult,
  type Incentive,
  type LegacyOptOutResult,
  type OptedOutResult,
  type Page,
  type Participant,
  type PersonProperty,
  type Question,
  type QuestionRequestInput,
  type ReplaceScreenerInput,
  type Screener,
  type SearchEmailsBody,
  type Segment,
  type Study,
  type UpdateStudyBody,
  ValidationErrorBody,
} from "./schemas/index.ts";
import { createNodeTransport, fetchTransport, type Transport, type TransportResponse } from "./transport.ts";

/** What the client tells its hooks about one HTTP exchange. */
export interface ResponseContext {
  operationId: OperationId;
  status: number;
  attempt: number;
  rateLimit: RateLimitInfo | undefined;
  retryAfterMs: number | undefined;
  /** What beforeRequest resolved to for this attempt (the governor's permit), so a hook can match the two. */
  permit?: unknown;
  /** Epoch ms when the headers arrived: a relative X-RateLimit-Reset counts from here, not from the body's end. */
  receivedAt?: number;
}

export interface ClientOptions {
  /** The service's base URL, including /api/public/v1. */
  baseUrl: string;
  token: string;
  /** Per attempt. */
  timeoutMs?: number;
  retry?: Partial<RetryOptions>;
  /** Unit of X-RateLimit-Reset; "auto" detects it per response. */
  resetUnit?: ResetUnit;
  /**
   * Awaited before every attempt: the rate governor's acquire. It must honour
   * the call's signal. What it resolves to is handed back to onResponse and
   * afterRequest for the same attempt.
   */
  beforeRequest?: (operationId: OperationId, signal: AbortSignal | undefined) => Promise<unknown>;
  /** Called with every response's rate-limit headers, errors included. */
  onResponse?: (ctx: ResponseContext) => void | Promise<void>;
  /**
   * Called once after every attempt beforeRequest let through, answered or
   * not (network fault, timeout, abort): the governor frees the request's
   * in-flight slot here when no answer will ever say it is done.
   */
  afterRequest?: (permit: unknown, operationId: OperationId) => void | Promise<void>;
  /** Check request bodies against the contract before sending (default true). */
  validateRequests?: boolean;
  logger?: Logger;
  /**
   * Sends through this WHATWG fetch instead of the default transport
   * (node:http with a keep-alive agent per client): a test's wrapper that
   * looks at what goes out, say.
   */
  fetch?: typeof fetch;
  /** For tests: replaces setTimeout-based waiting and Math.random. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  random?: () => number;
}

export interface CallInput {
  params?: Record<string, string>;
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  /**
   * The body as JSON text that is valid by construction, sent as is instead of
   * `body`: no parse, no second validation, no stringify. Only for text built
   * from values already checked against the operation's schema — an import's
   * batches, whose people were validated on their way into the spill
   * (imports/batch.ts; test/imports/batch-body.test.ts parses what goes out
   * against the schema).
   */
  bodyText?: string | Uint8Array;
}
export interface CallOptions {
  signal?: AbortSignal;
  /**
   * Once aborted, no attempt of this call goes out any more: a wait for the
   * rate budget or for a retry ends with its reason. Unlike `signal`, it
   * leaves a request already sent to be answered (an import's answer can
   * still be recorded).
   */
  sendNoMore?: AbortSignal;
}

type ResponseOf<K extends OperationId> = z.infer<Endpoints[K]["response"]>;

function defaultSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * A signal that aborts after `ms` or with `parent`, and a release for when
 * the attempt is over. Cheaper per request than `AbortSignal.any` with
 * `AbortSignal.timeout`: no timer left to run out after the answer came, and
 * no dependent signal held by a parent that lives as long as the export.
 */
function abortAfter(ms: number, parent: AbortSignal | undefined): { signal: AbortSignal; release(): void } {
  const ctl = new AbortController();
  const onAbort = () => ctl.abort(parent?.reason);
  const timer = setTimeout(
    () => ctl.abort(new DOMException("The operation was aborted due to timeout", "TimeoutError")),
    ms,
  );
  if (parent?.aborted) ctl.abort(parent.reason);
  else parent?.addEventListener("abort", onAbort, { once: true });
  return {
    signal: ctl.signal,
    release() {
      clearTimeout(timer);
      parent?.removeEventListener("abort", onAbort);
    },
  };
}

/**
 * The typed client of the service: one method per operation, paging iterators
 * for the search operations, retries, and rate-limit headers handed to a hook.
 *
 * @example
 * const client = createClient({ baseUrl: "http://127.0.0.1:4010/api/public/v1", token });
 * for await (const p of client.participants("study_1")) console.log(p.participantId);
 */
export class ApiClient {
  readonly baseUrl: string;
  readonly #token: string;
  readonly #opts: ClientOptions;
  readonly #retry: RetryOptions;
  readonly #transport: Transport;
  readonly #sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  readonly #random: () => number;

  constructor(options: ClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.#token = options.token;
    this.#opts = options;
    this.#retry = { ...DEFAULT_RETRY, ...options.retry };
    this.#transport = options.fetch ? fetchTransport(options.fetch) : createNodeTransport();
    this.#sleep = options.sleep ?? defaultSleep;
    this.#random = options.random ?? Math.random;
  }

  /** Calls one operation by id; the typed methods below are thin wrappers of this. */
  async call<K extends OperationId>(
    operationId: K,
    input: CallInput = {},
    options: CallOptions = {},
  ): Promise<ResponseOf<K>> {
    const ep = endpoints[operationId] as unknown as Endpoint;
    let body: unknown = input.body;
    if (
      input.bodyText === undefined &&
      ep.body.type !== "undefined" &&
      this.#opts.validateRequests !== false
    ) {
      const parsed = ep.body.safeParse(body);
      if (!parsed.success) {
        throw new ApiError(
          "bad_request",
          `${operationId}: request not sent, it breaks the contract at ${parsed.error.issues[0]?.path.join(".") || "(body)"}: ${parsed.error.issues[0]?.message}`,
          { operationId, retryable: false, cause: parsed.error },
        );
      }
      body = parsed.data;
    }
    for (const [name, value] of Object.entries(input.params ?? {})) {
      // "." and ".." survive encodeURIComponent and are resolved away by URL: the request would reach another path.
      if (value === "." || value === ".." || value === "") {
        throw new ApiError(
          "bad_request",
          `${operationId}: request not sent, ${name} ${JSON.stringify(value)} is not an id`,
          { operationId, retryable: false },
        );
      }
    }
    const url = new URL(this.baseUrl + fillPath(ep.path, input.params ?? {}));
    for (const [k, v] of Object.entries(input.query ?? {})) {
      if (v !== undefined) url.searchParams.set(k, String(v));
    }
    // Serialised once, not once per attempt.
    const bodyText = input.bodyText ?? (body === undefined ? undefined : JSON.stringify(body));
    const text = await this.#send(operationId, ep, url, bodyText, options.signal, options.sendNoMore);
    let json: unknown;
    try {
      json = JSON.parse(text.body);
    } catch (err) {
      throw new UnexpectedResponseError(
        operationId,
        text.status,
        [{ path: [], message: "is not JSON" }],
        err,
      );
    }
    const parsed = ep.response.safeParse(json);
    if (!parsed.success) {
      throw new UnexpectedResponseError(
        operationId,
        text.status,
        parsed.error.issues.map((i) => ({
          path: i.path.map((p) => (typeof p === "symbol" ? String(p) : p)),
          message: i.message,
        })),
        parsed.error,
      );
    }
    return parsed.data as ResponseOf<K>;
  }

  async #send(
    operationId: OperationId,
    ep: Endpoint,
    url: URL,
    body: string | Uint8Array | undefined,
    signal: AbortSignal | undefined,
    sendNoMore: AbortSignal | undefined,
  ): Promise<{ status: number; body: string }> {
    const timeoutMs = this.#opts.timeoutMs ?? 30_000;
    const log = this.#opts.logger;
    // Waits (the budget's, a retry's) end on either signal; the request on the wire only on `signal`.
    const waits = sendNoMore && signal ? AbortSignal.any([signal, sendNoMore]) : (sendNoMore ?? signal);
    for (let attempt = 1; ; attempt++) {
      waits?.throwIfAborted();
      const permit = await this.#opts.beforeRequest?.(operationId, waits);
      if (sendNoMore?.aborted) {
        await this.#opts.afterRequest?.(permit, operationId);
        throw sendNoMore.reason;
      }
      const attemptAbort = abortAfter(timeoutMs, signal);
      const attemptSignal = attemptAbort.signal;
      let res: TransportResponse;
      let text: string;
      let receivedAt: number;
      try {
        res = await this.#transport(url, {
          method: ep.method,
          headers: {
            authorization: `Bearer ${this.#token}`,
            accept: "application/json",
            ...(body === undefined ? {} : { "content-type": "application/json" }),
          },
          body,
          signal: attemptSignal,
        });
        receivedAt = Date.now();
        text = await res.text();
        attemptAbort.release();
      } catch (err) {
        attemptAbort.release();
        await this.#opts.afterRequest?.(permit, operationId);
        if (signal?.aborted) throw signal.reason;
        const timedOut = err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError");
        const canRetry = ep.retrySafe || requestNeverSent(err);
        const error = timedOut
          ? new ApiError("timeout", `${operationId}: no answer within ${timeoutMs} ms`, {
              operationId,
              cause: err,
              retryable: canRetry,
            })
          : new ApiError("network_error", `${operationId}: could not reach the service (${describe(err)})`, {
              operationId,
              cause: err,
              retryable: canRetry,
            });
        if (!canRetry || attempt >= this.#retry.maxAttempts) throw error;
        const wait = backoffDelay(attempt, this.#retry, this.#random);
        log?.warn({ operationId, attempt, code: error.code, waitMs: wait }, "retrying after a network fault");
        await this.#sleep(wait, waits);
        continue;
      }

      const rateLimit = parseRateLimitHeaders(res.headers, this.#opts.resetUnit ?? "auto", receivedAt);
      const retryAfterMs =
        res.status === 429 ? parseRetryAfter(res.headers.get("retry-after"), receivedAt) : undefined;
      try {
        await this.#opts.onResponse?.({
          operationId,
          status: res.status,
          attempt,
          rateLimit,
          retryAfterMs,
          permit,
          receivedAt,
        });
      } finally {
        await this.#opts.afterRequest?.(permit, operationId);
      }

      if (res.status >= 200 && res.status < 300) return { status: res.status, body: text };

      const error = toApiError(operationId, res.status, text, retryAfterMs);
      if (attempt >= this.#retry.maxAttempts) throw error;
      let wait: number;
      if (res.status === 429) {
        wait = retryAfterMs ?? backoffDelay(attempt, this.#retry, this.#random);
        if (wait > this.#retry.maxRetryAfterMs) throw error;
        // A little jitter so workers told the same Retry-After do not return in one burst.
        wait += Math.round(this.#random() * Math.min(1000, this.#retry.baseDelayMs));
      } else if (res.status >= 500 && ep.retrySafe) {
        wait = backoffDelay(attempt, this.#retry, this.#random);
      } else {
        throw error;
      }
      log?.warn({ operationId, attempt, status: res.status, waitMs: wait }, "retrying");
      await this.#sleep(wait, waits);
    }
  }

  // ---- one method per operation ----

  /** PUT /studies/{studyId}/screener — replaces the whole screener (spec 4.1). */
  replaceScreener(studyId: string, body: ReplaceScreenerInput, o?: CallOptions): Promise<Screener> {
    return this.call("replaceScreener", { params: { studyId }, body }, o);
  }
  /** GET /studies/{studyId}/screener (spec 4.2). */
  getScreener(studyId: string, o?: CallOptions): Promise<Screener> {
    return this.call("getScreener", { params: { studyId } }, o);
  }
  /** PATCH /studies/{studyId} — only the provided fields change (spec 4.3). */
  updateStudy(studyId: string, body: UpdateStudyBody, o?: CallOptions): Promise<Study> {
    return this.call("updateStudy", { params: { studyId }, body }, o);
  }
  /** POST /studies/{studyId}/participants/import (spec 4.4). */
  importParticipants(studyId: string, body: ImportParticipantsInput, o?: CallOptions): Promise<ImportResult> {
    return this.call("importParticipants", { params: { studyId }, body }, o);
  }
  /** The same with the body as text valid by construction (CallInput.bodyText): an import's batches. */
  importParticipantsText(
    studyId: string,
    bodyText: string | Uint8Array,
    o?: CallOptions,
  ): Promise<ImportResult> {
    return this.call("importParticipants", { params: { studyId }, bodyText }, o);
  }
  /** POST /studies/{studyId}/participants/search — one page (spec 4.5). */
  searchParticipants(
    studyId: string,
    pageInfo: { size?: number; startCursor?: string } = {},
    o?: CallOptions,
  ): Promise<Page<Participant>> {
    return this.call("searchParticipants", { params: { studyId }, body: { pageInfo } }, o);
  }
  /** POST /studies/{studyId}/screener/questions — appends one question (spec 4.6). Not retried after a 5xx. */
  createScreenerQuestion(studyId: string, body: QuestionRequestInput, o?: CallOptions): Promise<Question> {
    return this.call("createScreenerQuestion", { params: { studyId }, body }, o);
  }
  /** PUT /people/{personIdOrEmail}/opted-out (spec 4.7). */
  updateOptedOut(personIdOrEmail: string, isOptedOut: boolean, o?: CallOptions): Promise<OptedOutResult> {
    return this.call("updateOptedOut", { params: { personIdOrEmail }, body: { isOptedOut } }, o);
  }
  /** POST /properties/delete — per-item failures come back in `errors` (spec 4.8). */
  deleteProperties(propertyIds: string[], o?: CallOptions): Promise<DeletePropertiesResult> {
    return this.call("deleteProperties", { body: { propertyIds } }, o);
  }
  /** GET /property-groups/{id}/properties — one page (spec 4.9). */
  listPropertyGroupProperties(
    propertyGroupId: string,
    page: { cursor?: string; pageSize?: number } = {},
    o?: CallOptions,
  ): Promise<Page<PersonProperty>> {
    return this.call(
      "listPropertyGroupProperties",
      {
        params: { propertyGroupId },
        query: {
          [SPEC_DEFAULTS.propertyGroupCursorParam]: page.cursor,
          [SPEC_DEFAULTS.propertyGroupPageSizeParam]: page.pageSize,
        },
      },
      o,
    );
  }
  /** GET /incentives/{incentiveId} (spec 4.10). */
  getIncentive(incentiveId: string, o?: CallOptions): Promise<Incentive> {
    return this.call("getIncentive", { params: { incentiveId } }, o);
  }
  /** GET /incentives/custom/{customIncentiveId} (spec 4.11). */
  getCustomIncentive(customIncentiveId: string, o?: CallOptions): Promise<CustomIncentive> {
    return this.call("getCustomIncentive", { params: { customIncentiveId } }, o);
  }
  /** POST /messages/emails/search — one page (spec 4.12). */
  searchEmails(body: SearchEmailsBody = {}, o?: CallOptions): Promise<Page<EmailMessage>> {
    return this.call("searchEmails", { body }, o);
  }
  /** POST /segments/search — one page (spec 4.13). */
  searchSegments(
    pageInfo: { size?: number; startCursor?: string } = {},
    o?: CallOptions,
  ): Promise<Page<Segment>> {
    return this.call("searchSegments", { body: { pageInfo } }, o);
  }
  /** POST /person — deprecated, use updateOptedOut (spec 4.14). */
  legacyOptOut(email: string, optedOut: boolean, o?: CallOptions): Promise<LegacyOptOutResult> {
    return this.call("legacyOptOut", { body: { email, optedOut } }, o);
  }

  // ---- paging to the end ----

  /** Every page of a study's participants. */
  participantPages(studyId: string, opts: PagingOptions = {}): AsyncGenerator<Page<Participant>> {
    return pageThrough("searchParticipants", opts, (startCursor, size) =>
      this.searchParticipants(studyId, withCursor(size, startCursor), { signal: opts.signal }),
    );
  }
  /** Every page of an email search; the body's own pageInfo.size is the page size. */
  emailPages(
    body: Omit<SearchEmailsBody, "pageInfo"> = {},
    opts: PagingOptions = {},
  ): AsyncGenerator<Page<EmailMessage>> {
    return pageThrough("searchEmails", opts, (startCursor, size) =>
      this.searchEmails({ ...body, pageInfo: withCursor(size, startCursor) }, { signal: opts.signal }),
    );
  }
  segmentPages(opts: PagingOptions = {}): AsyncGenerator<Page<Segment>> {
    return pageThrough("searchSegments", opts, (startCursor, size) =>
      this.searchSegments(withCursor(size, startCursor), { signal: opts.signal }),
    );
  }
  propertyGroupPages(
    propertyGroupId: string,
    opts: PagingOptions = {},
  ): AsyncGenerator<Page<PersonProperty>> {
    return pageThrough("listPropertyGroupProperties", opts, (cursor, pageSize) =>
      this.listPropertyGroupProperties(
        propertyGroupId,
        { ...(cursor === undefined ? {} : { cursor }), ...(pageSize === undefined ? {} : { pageSize }) },
        { signal: opts.signal },
      ),
    );
  }

  /** Every participant of a study, page after page. */
  async *participants(studyId: string, opts: PagingOptions = {}): AsyncGenerator<Participant> {
    for await (const page of this.participantPages(studyId, opts)) yield* page.results;
  }
}

export interface PagingOptions {
  pageSize?: number;
  /** Resume after this cursor (an endCursor from an earlier page). */
  startCursor?: string;
  signal?: AbortSignal | undefined;
}

function withCursor(
  size: number | undefined,
  startCursor: string | undefined,
): { size?: number; startCursor?: string } {
  return { ...(size === undefined ? {} : { size }), ...(startCursor === undefined ? {} : { startCursor }) };
}

/**
 * Follows endCursor until hasNextPage is false. A service that hands back a
 * cursor it already gave would loop for ever: that is reported, not followed.
 */
async function* pageThrough<T>(
  operationId: OperationId,
  opts: PagingOptions,
  fetchPage: (cursor: string | undefined, size: number | undefined) => Promise<Page<T>>,
): AsyncGenerator<Page<T>> {
  let cursor = opts.startCursor;
  const seen = new Set<string>();
  for (;;) {
    const page = await fetchPage(cursor, opts.pageSize);
    yield page;
    const next = page.pageInfo.endCursor ?? undefined;
    if (!page.pageInfo.hasNextPage || next === undefined || page.results.length === 0) return;
    if (seen.has(next)) {
      throw new UnexpectedResponseError(operationId, 200, [
        { path: ["pageInfo", "endCursor"], message: "repeats a cursor already followed" },
      ]);
    }
    seen.add(next);
    cursor = next;
  }
}

function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause instanceof Error ? err.cause : undefined;
  const code = (cause as { code?: string } | undefined)?.code ?? (err as { code?: string }).code;
  return code ?? cause?.message ?? err.message;
}

/** Maps a non-2xx answer (text or JSON body, spec 7) to the error hierarchy. */
export function toApiError(
  operationId: string,
  status: number,
  text: string,
  retryAfterMs?: number,
): ApiError {
  const body = text.trim();
  switch (status) {
    case 400: {
      const errors = parseValidationBody(body);
      if (errors) return new ValidationApiError(operationId, errors, text);
      return new ApiError("bad_request", `${operationId}: bad request: ${body || "Bad Request"}`, {
        status,
        operationId,
        body: text,
        retryable: false,
      });
    }
    case 401:
      return new ApiError("unauthorized", `${operationId}: the API token is missing or invalid (401)`, {
        status,
        operationId,
        body: text,
        retryable: false,
      });
    case 403:
      return new ApiError("forbidden", `${operationId}: the API token lacks permission for this call (403)`, {
        status,
        operationId,
        body: text,
        retryable: false,
      });
    case 404: {
      const m = /^(.+?) not found$/i.exec(body);
      return new NotFoundApiError(operationId, m?.[1] ?? "Resource", text);
    }
    case 409:
      return new ApiError("conflict", `${operationId}: ${body || "Conflict"}`, {
        status,
        operationId,
        body: text,
        retryable: false,
      });
    case 429:
      return new RateLimitedApiError(operationId, retryAfterMs, text);
    default:
      if (status >= 500) {
        return new ApiError("server_error", `${operationId}: the service failed (${status})`, {
          status,
          operationId,
          body: text,
          retryable: true,
        });
      }
      return new ApiError("http_error", `${operationId}: unexpected status ${status}`, {
        status,
        operationId,
        body: text,
        retryable: false,
      });
  }
}

function parseValidationBody(body: string): ValidationErrorBody["errors"] | undefined {
  if (!body.startsWith("{")) return undefined;
  try {
    const parsed = ValidationErrorBody.safeParse(JSON.parse(body));
    return parsed.success ? parsed.data.errors : undefined;
  } catch {
    return undefined;
  }
}

/** Creates the typed client. */
export function createClient(options: ClientOptions): ApiClient {
  return new ApiClient(options);
}
