import {
  type EmailMessage,
  type FilterCondition,
  type FilterGroup,
  requestCursor,
  type ValidationErrorItem,
} from "../../api/index.ts";
import type { EmulatorClock } from "../clock.ts";
import { validationFailed } from "../http-error.ts";
import { effectiveIncentiveStatus } from "../incentive-expiry.ts";
import { decodeCursor, pageOf } from "../paging.ts";
import type { EmailMessageRecord, Store } from "../store/store.ts";
import type { Handler } from "./handler-types.ts";

const DAY = 86_400_000;
type Kind = "string" | "date";
type Value = string | number | boolean | null | undefined;
interface Field {
  kind: Kind;
  /** Every value the message has for the field; a condition holds when one of them does. */
  get: (m: EmailMessageRecord, store: Store, now: number) => Value[];
}

const one =
  (f: (m: EmailMessageRecord) => Value): Field["get"] =>
  (m) => [f(m)];
const msg = (kind: Kind, f: (m: EmailMessageRecord) => Value): Field => ({ kind, get: one(f) });

/**
 * Filterable properties by group (spec 4.12: id, recipient, sender, status,
 * type, subject, dates, and related entities). Names are ours where the spec
 * gives none; docs/emulator.md lists them.
 */
const MESSAGE_FIELDS: Record<string, Field> = {
  EMAIL_ID: msg("string", (m) => m.id),
  EMAIL_STATUS: msg("string", (m) => m.status),
  EMAIL_TYPE: msg("string", (m) => m.type),
  SUBJECT: msg("string", (m) => m.subject),
  SENT_AT: msg("date", (m) => m.sentAt),
  CREATED_AT: msg("date", (m) => m.createdAt),
  SCHEDULED_SEND_TIME: msg("date", (m) => m.scheduledSendTime),
  RECIPIENT: msg("string", (m) => m.recipientEmail),
  RECIPIENT_ID: msg("string", (m) => m.recipientId),
  SENDER: msg("string", (m) => m.senderEmail),
  SENDER_ID: msg("string", (m) => m.senderId),
  STUDY: msg("string", (m) => m.studyId),
  PARTICIPANT: msg("string", (m) => m.participantId),
  CAMPAIGN: msg("string", (m) => m.messageCampaignId),
  TEAM: msg("string", (m) => m.teamId),
  POPULATION: msg("string", (m) => m.populationId),
};
const MESSAGE_ALIASES: Record<string, string> = {
  ID: "EMAIL_ID",
  STATUS: "EMAIL_STATUS",
  TYPE: "EMAIL_TYPE",
  EMAIL_SUBJECT: "SUBJECT",
  RECIPIENT_EMAIL: "RECIPIENT",
  SENDER_EMAIL: "SENDER",
  STUDY_ID: "STUDY",
  PARTICIPANT_ID: "PARTICIPANT",
  CAMPAIGN_ID: "CAMPAIGN",
  MESSAGE_CAMPAIGN_ID: "CAMPAIGN",
  TEAM_ID: "TEAM",
  POPULATION_ID: "POPULATION",
  PANEL: "POPULATION",
  PANEL_ID: "POPULATION",
};

const person = (
  f: (p: NonNullable<ReturnType<Store["people"]["get"]>>) => Value | Value[],
  kind: Kind = "string",
): Field => ({
  kind,
  get: (m, store) => {
    const p = m.recipientId ? store.people.get(m.recipientId) : undefined;
    if (!p) return [];
    const v = f(p);
    return Array.isArray(v) ? v : [v];
  },
});
const PERSON_FIELDS: Record<string, Field> = {
  EMAIL: person((p) => [p.email, ...p.additionalEmails]),
  PERSON_ID: person((p) => p.personId),
  FIRST_NAME: person((p) => p.firstName),
  LAST_NAME: person((p) => p.lastName),
  PHONE: person((p) => [p.phone, ...p.additionalPhones]),
  IS_OPTED_OUT: person((p) => String(p.isOptedOut)),
  CONTACT_STATUS: person((p) => p.contactStatus),
  LAST_CONTACT_DATE: person((p) => p.lastContactDate, "date"),
  POPULATION: person((p) => p.populationIds),
};
const PERSON_ALIASES: Record<string, string> = {
  ID: "PERSON_ID",
  POPULATION_ID: "POPULATION",
  OPTED_OUT: "IS_OPTED_OUT",
};

const participant = (f: (p: Record<string, unknown>) => unknown, kind: Kind = "string"): Field => ({
  kind,
  get: (m, store) => {
    if (!m.studyId || !m.recipientId) return [];
    const p = store.participants.get(m.studyId)?.byPerson.get(m.recipientId);
    const v = p ? f(p) : undefined;
    return p ? [v as Value] : [];
  },
});
const PARTICIPANT_FIELDS: Record<string, Field> = {
  PARTICIPANT_ID: participant((p) => p.participantId),
  STATUS: participant((p) => p.status),
  APPROVAL_STATUS: participant((p) => p.approvalStatus),
  SCREENER_STATE: participant((p) => p.screenerState),
  STUDY: participant((p) => p.studyId),
  ADDED_TO_STUDY_AT: participant((p) => p.addedToStudyAt, "date"),
  INVITED_TO_STUDY_AT: participant((p) => p.invitedToStudyAt, "date"),
};
const PARTICIPANT_ALIASES: Record<string, string> = {
  ID: "PARTICIPANT_ID",
  PARTICIPANT_STATUS: "STATUS",
  STUDY_ID: "STUDY",
};

const incentives = (
  f: (i: Record<string, unknown>, now: number) => unknown,
  kind: Kind = "string",
): Field => ({
  kind,
  get: (m, store, now) => {
    if (!m.recipientId) return [];
    const out: Value[] = [];
    for (const i of store.incentives.values()) {
      if (i.personId === m.recipientId)
        out.push(f({ ...i, status: effectiveIncentiveStatus(i, now) }, now) as Value);
    }
    return out;
  },
});
const INCENTIVE_FIELDS: Record<string, Field> = {
  INCENTIVE_ID: incentives((i) => i.incentiveId),
  STATUS: incentives((i) => i.status),
  TYPE: incentives((i) => i.type),
  SENT_AT: incentives((i) => i.sentAt, "date"),
  AMOUNT_CENTS: incentives((i) => i.amountCents),
};
const INCENTIVE_ALIASES: Record<string, string> = {
  ID: "INCENTIVE_ID",
  INCENTIVE_STATUS: "STATUS",
  INCENTIVE_TYPE: "TYPE",
};

const GROUPS: Record<FilterGroup, { fields: Record<string, Field>; aliases: Record<string, string> }> = {
  message: { fields: MESSAGE_FIELDS, aliases: MESSAGE_ALIASES },
  person: { fields: PERSON_FIELDS, aliases: PERSON_ALIASES },
  participant: { fields: PARTICIPANT_FIELDS, aliases: PARTICIPANT_ALIASES },
  incentive: { fields: INCENTIVE_FIELDS, aliases: INCENTIVE_ALIASES },
};

const OPERATORS = [
  "IS",
  "IS_NOT",
  "CONTAINS",
  "NOT_CONTAINS",
  "STARTS_WITH",
  "IS_WITHIN",
  "IS_BEFORE",
  "IS_AFTER",
  "IS_EMPTY",
  "IS_NOT_EMPTY",
] as const;
type Operator = (typeof OPERATORS)[number];
const OPERATOR_ALIASES: Record<string, Operator> = {
  EQUALS: "IS",
  EQ: "IS",
  NOT_EQUALS: "IS_NOT",
  NEQ: "IS_NOT",
  DOES_NOT_CONTAIN: "NOT_CONTAINS",
  BEFORE: "IS_BEFORE",
  AFTER: "IS_AFTER",
  IS_SET: "IS_NOT_EMPTY",
  IS_NOT_SET: "IS_EMPTY",
};

type Predicate = (m: EmailMessageRecord) => boolean;

/** A date interval [from, to) in epoch ms a relative or absolute value stands for. */
function dayRange(c: FilterCondition, now: number, path: (string | number)[]): { from: number; to: number } {
  if (c.value === "NUMBER_OF_DAYS_AGO") {
    const amount = c.amount ?? 0;
    const day = startOfUtcDay(now - amount * DAY);
    return { from: day, to: day + DAY };
  }
  const t = Date.parse(c.value);
  if (Number.isNaN(t))
    throw validationFailed([
      { message: "value is not a date or NUMBER_OF_DAYS_AGO", path: [...path, "value"] },
    ]);
  const day = startOfUtcDay(t);
  return { from: day, to: day + DAY };
}

function startOfUtcDay(ms: number): number {
  return Math.floor(ms / DAY) * DAY;
}

function compile(
  group: FilterGroup,
  c: FilterCondition,
  path: (string | number)[],
  clock: EmulatorClock,
  store: Store,
): Predicate {
  const g = GROUPS[group];
  const name = c.propertyName.toUpperCase();
  const field = g.fields[name] ?? g.fields[g.aliases[name] ?? ""];
  if (!field) {
    throw validationFailed([
      {
        message: `Unknown ${group} property ${c.propertyName}; known: ${Object.keys(g.fields).join(", ")}`,
        path: [...path, "propertyName"],
      },
    ]);
  }
  const opName = c.operator.toUpperCase();
  const op = (OPERATORS as readonly string[]).includes(opName)
    ? (opName as Operator)
    : OPERATOR_ALIASES[opName];
  if (!op) {
    throw validationFailed([
      {
        message: `Unknown operator ${c.operator}; known: ${OPERATORS.join(", ")}`,
        path: [...path, "operator"],
      },
    ]);
  }
  const now = clock.now();
  const values = (m: EmailMessageRecord) => field.get(m, store, now);
  const present = (v: Value) => v !== null && v !== undefined && v !== "";
  const text = (v: Value) => String(v).toLowerCase();
  const wanted = c.value.toLowerCase();

  if (op === "IS_EMPTY") return (m) => !values(m).some(present);
  if (op === "IS_NOT_EMPTY") return (m) => values(m).some(present);

  if (field.kind === "date") {
    const time = (v: Value) => (typeof v === "string" ? Date.parse(v) : Number.NaN);
    if (op === "IS_WITHIN") {
      if (c.value !== "NUMBER_OF_DAYS_AGO") {
        throw validationFailed([
          {
            message: "IS_WITHIN takes the value NUMBER_OF_DAYS_AGO with an amount",
            path: [...path, "value"],
          },
        ]);
      }
      const from = now - (c.amount ?? 0) * DAY;
      return (m) => values(m).some((v) => time(v) >= from && time(v) <= now);
    }
    const { from, to } = dayRange(c, now, path);
    switch (op) {
      case "IS":
        return (m) => values(m).some((v) => time(v) >= from && time(v) < to);
      case "IS_NOT":
        return (m) => !values(m).some((v) => time(v) >= from && time(v) < to);
      case "IS_BEFORE":
        return (m) => values(m).some((v) => time(v) < from);
      case "IS_AFTER":
        return (m) => values(m).some((v) => time(v) >= to);
      default:
        throw validationFailed([
          { message: `Operator ${c.operator} does not apply to a date`, path: [...path, "operator"] },
        ]);
    }
  }
  switch (op) {
    case "IS":
      return (m) => values(m).some((v) => present(v) && text(v) === wanted);
    case "IS_NOT":
      return (m) => !values(m).some((v) => present(v) && text(v) === wanted);
    case "CONTAINS":
      return (m) => values(m).some((v) => present(v) && text(v).includes(wanted));
    case "NOT_CONTAINS":
      return (m) => !values(m).some((v) => present(v) && text(v).includes(wanted));
    case "STARTS_WITH":
      return (m) => values(m).some((v) => present(v) && text(v).startsWith(wanted));
    default:
      throw validationFailed([
        {
          message: `Operator ${c.operator} applies only to dates`,
          path: [...path, "operator"],
        } satisfies ValidationErrorItem,
      ]);
  }
}

export function emailView(m: EmailMessageRecord): EmailMessage {
  const { teamId: _team, populationId: _population, ...message } = m;
  return message;
}

/** POST /messages/emails/search (spec 4.12): filter groups joined by AND or OR, plus restrictions. */
export const searchEmails: Handler<"searchEmails"> = ({ store, clock }, { body }) => {
  const predicates: Predicate[] = [];
  if (body.studyId !== undefined) predicates.push((m) => m.studyId === body.studyId);
  if (body.teamId !== undefined) predicates.push((m) => m.teamId === body.teamId);
  if (body.userId !== undefined) predicates.push((m) => m.senderId === body.userId);
  if (body.populationId !== undefined) {
    const pid = body.populationId;
    predicates.push((m) => {
      if (m.populationId === pid) return true;
      const p = m.recipientId ? store.people.get(m.recipientId) : undefined;
      return p?.populationIds.includes(pid) ?? false;
    });
  }
  const filter = body.filter;
  if (filter && filter.filters.length > 0) {
    const parts = filter.filters.map((item, i) => {
      const [group, condition] = Object.entries(item)[0] as [FilterGroup, FilterCondition];
      return compile(group, condition, ["filter", "filters", i, group], clock, store);
    });
    predicates.push(
      filter.operator === "AND" ? (m) => parts.every((p) => p(m)) : (m) => parts.some((p) => p(m)),
    );
  }
  const matches =
    predicates.length === 0
      ? store.emailMessages
      : store.emailMessages.filter((m) => predicates.every((p) => p(m)));
  const offset = decodeCursor(requestCursor(body.pageInfo), ["pageInfo", "startCursor"]);
  return pageOf(matches, offset, body.pageInfo?.size, emailView);
};
