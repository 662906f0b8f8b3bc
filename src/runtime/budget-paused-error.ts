import { RecruitSyncError } from "../errors/index.ts";

/**
 * The shared budget is spent for longer than a run should hold its slot:
 * a queued job checkpoints and waits in `delayed` until `resumeAt`. Not a
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
