import { z } from "zod";
import type { EmailFilter, EmailMessage, SearchEmailsBody } from "../../api/index.ts";
import { type CursorPolicy, runPass } from "../paged-pass.ts";
import { pagingFrom, type StreamContext } from "../stream-context.ts";
import { EXPORT_TABLES } from "../tables.ts";

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

/**
 * `highWater`: the newest sentAt loaded by a finished pass, at most the
 * run's now (`notAfter`). `pass`: the search under way — its lower bound,
 * the day count sent, the next page's cursor, the newest sentAt so far. The
 * high-water mark moves only when a pass ends, so a killed run never skips
 * records older than what it loaded.
 */
const EmailState = z.object({
  highWater: z.string().nullable().default(null),
  pass: z
    .object({
      since: z.string(),
      amount: z.number().int(),
      cursor: z.string().nullable(),
      maxSentAt: z.string().nullable(),
      /** The window's total on the pass's first page. */
      total: z.number().int().nullable().default(null),
    })
    .optional(),
});
type EmailState = z.infer<typeof EmailState>;
type Pass = NonNullable<EmailState["pass"]>;

/** The state key: one cursor per restriction, so jobs restricted differently do not share it. */
export function emailStreamKey(ctx: Pick<StreamContext, "definition">): string {
  const e = ctx.definition.emails;
  const parts = (["studyId", "teamId", "userId", "populationId"] as const)
    .filter((k) => e[k] !== undefined)
    .map((k) => `${k}=${e[k]}`);
  return parts.length ? `email_messages:${parts.join(",")}` : "email_messages";
}

/** Whole days back from `now` that cover `since`; NUMBER_OF_DAYS_AGO counts days. */
export function daysCovering(since: Date, now: Date): number {
  return Math.max(1, Math.ceil((now.getTime() - since.getTime()) / DAY_MS));
}

export function sentWithinFilter(amount: number): EmailFilter {
  return {
    operator: "AND",
    filters: [
      {
        message: {
          propertyType: "DATETIME",
          propertyName: "SENT_AT",
          operator: "IS_WITHIN",
          value: "NUMBER_OF_DAYS_AGO",
          amount,
        },
      },
    ],
  };
}

function newer(a: string | null, b: string | null | undefined): string | null {
  if (!b) return a;
  if (!a) return b;
  return Date.parse(b) > Date.parse(a) ? b : a;
}

/**
 * The mark never passes `now`: one message with a future sentAt (a clock off,
 * a send scheduled ahead) would otherwise start every later window after the
 * messages sent meanwhile. Capping only makes the next window reach further back.
 */
function notAfter(mark: string | null, now: Date): string | null {
  return mark !== null && Date.parse(mark) > now.getTime() ? now.toISOString() : mark;
}

/**
 * Email messages, incrementally: each run searches SENT_AT within the days
 * since (newest sentAt loaded, capped at now, − lookback), or the backfill on
 * the first run. `now` is `ctx.now()`: the local clock unless the caller gives another.
 */
export function exportEmailMessages(ctx: StreamContext): Promise<void> {
  return ctx.inSlot(() => exportEmailWindow(ctx));
}

async function exportEmailWindow(ctx: StreamContext): Promise<void> {
  const stream = emailStreamKey(ctx);
  const opts = ctx.definition.emails;
  const parsed = EmailState.safeParse((await ctx.sink.readState(stream)) ?? {});
  const state: EmailState = parsed.success ? parsed.data : { highWater: null };
  const now = ctx.now();

  let pass: Pass;
  if (state.pass) {
    pass = state.pass;
    const amount = daysCovering(new Date(pass.since), now);
    // A day has turned since the killed run: the same lower bound needs a longer window, and its cursor is void.
    if (amount !== pass.amount) pass = { ...pass, amount, cursor: null, total: null };
  } else {
    const since = state.highWater
      ? new Date(Date.parse(state.highWater) - opts.lookbackHours * HOUR_MS)
      : new Date(now.getTime() - opts.backfillDays * DAY_MS);
    pass = {
      since: since.toISOString(),
      amount: daysCovering(since, now),
      cursor: null,
      maxSentAt: null,
      total: null,
    };
  }

  const body: Omit<SearchEmailsBody, "pageInfo"> = {
    filter: sentWithinFilter(pass.amount),
    ...(opts.studyId ? { studyId: opts.studyId } : {}),
    ...(opts.teamId ? { teamId: opts.teamId } : {}),
    ...(opts.userId ? { userId: opts.userId } : {}),
    ...(opts.populationId ? { populationId: opts.populationId } : {}),
  };

  await runPass(ctx, highWaterPolicy(ctx, stream, body, state.highWater, now), pass);
}

/**
 * The cursor comes from the page within one pass; across runs the cursor is
 * the high-water mark: the newest sentAt of a complete pass. A pass that saw
 * the window shrink may have skipped messages, so it keeps what it read but
 * does not move the mark past them.
 */
function highWaterPolicy(
  ctx: StreamContext,
  stream: string,
  body: Omit<SearchEmailsBody, "pageInfo">,
  highWater: string | null,
  now: Date,
): CursorPolicy<EmailMessage, Pass> {
  const table = EXPORT_TABLES.email_messages;
  return {
    stream,
    table: table.table.name,
    noun: "window",
    pages: (startCursor) => ctx.client.emailPages(body, pagingFrom(ctx, startCursor)),
    toRow: (m) => table.toRow(m),
    afterRecords: (pass, messages) => ({
      ...pass,
      maxSentAt: messages.reduce<string | null>((max, m) => newer(max, m.sentAt), pass.maxSentAt),
    }),
    underWay: (pass): EmailState => ({ highWater, pass }),
    reread: (pass) => ({ ...pass, cursor: null, total: null }),
    end: (pass, complete) => ({
      state: {
        highWater: complete ? notAfter(newer(highWater, pass.maxSentAt), now) : highWater,
      } satisfies EmailState,
    }),
    keptShrinking: "the window kept shrinking; the high-water mark stays for the next run",
  };
}
