import type { ApiClient, OperationId } from "../api/index.ts";
import { createClient } from "../api/index.ts";
import type { RuntimeConfig } from "../config/index.ts";
import { RecruitSyncError } from "../errors/index.ts";
import { createRateGovernor, type RateGovernor } from "../governor/index.ts";
import { asRedis, type RedisConnection } from "../runtime/index.ts";
import { countBudgetWait, countResponse } from "./fleet-counters.ts";

/**
 * The shared budget is spent for longer than a job should sit on a worker
 * slot: the job checkpoints and waits in `delayed` until `resumeAt`. Not a
 * failure, and it burns no attempt.
 */
export class BudgetPausedError extends RecruitSyncError {
  readonly resumeAt: number;
  constructor(resumeAt: number) {
    super("budget_paused", `waiting for rate budget until ${new Date(resumeAt).toISOString()}`, {
      retryable: true,
    });
    this.resumeAt = resumeAt;
  }
}

/** What one job spent waiting on the shared budget. */
export interface BudgetUse {
  waitedMs: number;
  waits: number;
}

export interface JobClient {
  client: ApiClient;
  governor: RateGovernor;
  budget: BudgetUse;
}

/**
 * A client for one job: the fleet's governor in front of every call, the
 * time this job waits on it measured, and a wait longer than the configured
 * bound turned into a pause (BudgetPausedError) instead of a held slot.
 */
export function jobClient(
  config: RuntimeConfig,
  redis: RedisConnection,
  options: { headroom?: number; interactive?: boolean } = {},
): JobClient {
  const token = config.service.token;
  if (!token) throw new RecruitSyncError("config_invalid", "no API token: set RECRUIT_SYNC_API_TOKEN");
  const headroom = options.headroom ?? 0;
  const governor = createRateGovernor({
    redis: asRedis(redis),
    token,
    service: config.service.baseUrl,
    prefix: config.redis.prefix,
    headroom,
  });
  const budget: BudgetUse = { waitedMs: 0, waits: 0 };
  const bound = config.queue.budgetWaitBoundMs;
  // Work a person waits for (CLI, dashboard, dropped files) takes the next slot before scheduled exports.
  const hooks = governor.clientHooks(options.interactive === false ? "background" : "interactive");
  const beforeRequest = async (operationId: OperationId, signal: AbortSignal | undefined) => {
    const state = await governor.state();
    const now = Date.now();
    if (
      state.remaining !== undefined &&
      state.resetAt !== undefined &&
      state.remaining - headroom < 1 &&
      state.resetAt - now > bound
    ) {
      throw new BudgetPausedError(state.resetAt);
    }
    const t0 = now;
    const permit = await hooks.beforeRequest(operationId, signal);
    const waited = Date.now() - t0;
    if (waited > 5) {
      budget.waitedMs += waited;
      budget.waits++;
      countBudgetWait(asRedis(redis), config.redis.prefix, waited);
    }
    // The permit goes back to the governor with the answer (or afterRequest), so in-flight counts stay exact.
    return permit;
  };
  const client = createClient({
    baseUrl: config.service.baseUrl,
    token,
    timeoutMs: config.service.timeoutMs,
    retry: config.service.retry,
    resetUnit: config.service.resetUnit,
    beforeRequest,
    onResponse: (ctx) => {
      countResponse(asRedis(redis), config.redis.prefix, ctx.operationId, ctx.status);
      return hooks.onResponse(ctx);
    },
    afterRequest: hooks.afterRequest,
  });
  return { client, governor, budget };
}
