import { z } from "zod";
import {
  type CustomIncentive,
  INCENTIVE_TYPES,
  type Incentive,
  type Participant,
  type PersonProperty,
  type Question,
  QuestionRequest,
  type Screener,
  type Study,
} from "../api/index.ts";
import { DEFAULT_SEED } from "./defaults.ts";
import { createPrng, type Prng } from "./prng.ts";
import { buildQuestion, newNativeScreener } from "./screener-builder.ts";
import {
  APPROVAL_STATUSES,
  COMPANY_SIZES,
  COUNTRIES,
  EMAIL_STATUSES,
  EMAIL_SUBJECTS,
  EMAIL_TYPES,
  FIRST_NAMES,
  JOB_TITLES,
  LAST_NAMES,
  PARTICIPANT_STATUSES,
  QUESTION_TEMPLATES,
  SCREENER_STATES,
  SEGMENT_NAMES,
} from "./seed-data.ts";
import { contactStatusFor, type PersonRecord, type User } from "./store/records.ts";
import type { Store } from "./store/store.ts";

/** How much the seeded workspace holds. The first 12 studies are fixed (docs/emulator.md). */
export const SeedSizes = z
  .object({
    studies: z.number().int().min(12).max(10_000).default(12),
    people: z.number().int().min(0).max(5_000_000).default(500),
    participantsPerStudy: z.number().int().min(0).max(1_000_000).default(25),
    properties: z.number().int().min(8).max(10_000).default(40),
    populations: z.number().int().min(1).max(1000).default(3),
    incentives: z.number().int().min(10).max(1_000_000).default(60),
    customIncentives: z.number().int().min(4).max(10_000).default(4),
    emailMessages: z.number().int().min(0).max(1_000_000).default(300),
    segments: z.number().int().min(0).max(100_000).default(30),
    teams: z.number().int().min(1).max(1000).default(3),
    users: z.number().int().min(1).max(10_000).default(6),
  })
  .strict();
export type SeedSizes = z.infer<typeof SeedSizes>;
export type SeedSizesInput = z.input<typeof SeedSizes>;

export { DEFAULT_SEED };

/** Fixed studies: id, type, status and screener kind are documented and relied on by tests. */
const FIXED_STUDIES: readonly {
  type: Study["studyType"];
  status: Study["status"];
  screener: "none" | Screener["type"];
  templates?: number[];
  strategy?: Study["recruitmentStrategy"];
}[] = [
  { type: "INTERVIEWS", status: "DRAFT", screener: "NATIVE", templates: [1] },
  { type: "INTERVIEWS", status: "DRAFT", screener: "none" },
  { type: "UNMODERATED_TEST", status: "DRAFT", screener: "SURVEY_PROVIDER_A" },
  { type: "SURVEY", status: "DRAFT", screener: "none" },
  { type: "INTERVIEWS", status: "ACTIVE", screener: "NATIVE" },
  { type: "GROUP_INTERVIEW", status: "PAUSED", screener: "NATIVE" },
  { type: "UNMODERATED_TEST", status: "CLOSED", screener: "CUSTOM_LINK" },
  { type: "GROUP_INTERVIEW", status: "DRAFT", screener: "NATIVE", templates: [3, 4] },
  { type: "SURVEY", status: "ACTIVE", screener: "none" },
  { type: "UNMODERATED_TEST", status: "DRAFT", screener: "FORM_PROVIDER_B" },
  { type: "SURVEY", status: "DRAFT", screener: "NATIVE" },
  { type: "GROUP_INTERVIEW", status: "ACTIVE", screener: "SURVEY_PROVIDER_C", strategy: "EXTERNAL" },
];

const DAY = 86_400_000;
const EMPTY: string[] = [];

/**
 * Fills an empty store from a seed. Everything random comes from one PRNG, so
 * a seed and sizes give the same store; only email dates follow `now` (they
 * are "N days ago" so NUMBER_OF_DAYS_AGO filters find them).
 */
export function seedStore(store: Store, seed: number, sizesInput: SeedSizesInput, now: number): void {
  const sizes = SeedSizes.parse(sizesInput);
  const rng = createPrng(seed);
  store.clear();

  for (let t = 1; t <= sizes.teams; t++)
    store.teams.set(`team_${t}`, { teamId: `team_${t}`, name: `Team ${t}` });
  for (let u = 1; u <= sizes.users; u++) {
    const first = rng.pick(FIRST_NAMES);
    const last = rng.pick(LAST_NAMES);
    store.users.set(`user_${u}`, {
      userId: `user_${u}`,
      teamId: `team_${((u - 1) % sizes.teams) + 1}`,
      fullname: `${first} ${last}`,
      email: `researcher${u}@research.example.com`,
      emailAccountId: `email_account_${u}`,
    });
  }
  for (let p = 1; p <= sizes.populations; p++) {
    store.populations.set(`population_${p}`, { populationId: `population_${p}`, name: `Population ${p}` });
  }

  seedProperties(store, sizes);
  QUESTION_TEMPLATES.forEach((question, i) => {
    const id = `question_template_${i + 1}`;
    store.questionTemplates.set(id, { questionTemplateId: id, question });
  });
  store.ids.observe(`question_template_${QUESTION_TEMPLATES.length}`);

  seedCustomIncentives(store);
  seedPeople(store, rng, sizes);
  seedStudies(store, rng, sizes);
  seedIncentives(store, rng, sizes);
  seedEmails(store, rng, sizes, now);
  for (let s = 1; s <= sizes.segments; s++) {
    const name = SEGMENT_NAMES[(s - 1) % SEGMENT_NAMES.length] as string;
    store.segments.push({
      segmentId: `segment_${s}`,
      name: s > SEGMENT_NAMES.length ? `${name} ${s}` : name,
    });
  }
  store.ids.observe(`segment_${sizes.segments}`);
  // ids of seeded records come from counters too, so new records never collide.
  store.ids.observe(`person_${sizes.people}`);
  store.ids.observe(`study_${sizes.studies}`);
  store.ids.observe(`incentive_${sizes.incentives}`);
  store.ids.observe(`email_${sizes.emailMessages}`);
}

function seedProperties(store: Store, sizes: SeedSizes): void {
  const groups = ["Identity", "Profile", "Sensitive", "Custom fields", "Empty group"];
  groups.forEach((name, i) => {
    store.propertyGroups.set(`property_group_${i + 1}`, { propertyGroupId: `property_group_${i + 1}`, name });
  });
  store.ids.observe(`property_group_${groups.length}`);
  const options = (names: readonly string[]) =>
    names.map((name, i) => ({
      propertyOptionId: store.ids.next("property_option"),
      name,
      color: "GREY",
      order: String(i),
    }));
  const fixed: (Partial<PersonProperty> & Pick<PersonProperty, "name" | "propertyType" | "isUnique">)[] = [
    { name: "External ID", propertyType: "STRING", isUnique: true, propertyGroupId: "property_group_1" },
    { name: "CRM ID", propertyType: "STRING", isUnique: true, propertyGroupId: "property_group_1" },
    {
      name: "Country",
      propertyType: "SINGLE_SELECT",
      isUnique: false,
      propertyGroupId: "property_group_2",
      propertyOptions: options(COUNTRIES),
    },
    { name: "Signup date", propertyType: "DATETIME", isUnique: false, propertyGroupId: "property_group_2" },
    { name: "Job title", propertyType: "STRING", isUnique: false, propertyGroupId: "property_group_2" },
    {
      name: "Company size",
      propertyType: "SINGLE_SELECT",
      isUnique: false,
      propertyGroupId: "property_group_2",
      propertyOptions: options(COMPANY_SIZES),
    },
    {
      name: "Health condition",
      propertyType: "STRING",
      isUnique: false,
      isPHI: true,
      propertyGroupId: "property_group_3",
    },
    {
      name: "Date of birth",
      propertyType: "DATETIME",
      isUnique: false,
      isPII: true,
      propertyGroupId: "property_group_3",
    },
  ];
  for (let i = 1; i <= sizes.properties; i++) {
    const f = fixed[i - 1] ?? {
      name: `Custom field ${i}`,
      propertyType: "STRING",
      isUnique: false,
      propertyGroupId: "property_group_4",
    };
    const prop: PersonProperty = {
      propertyId: `property_${i}`,
      isPHI: false,
      isPII: false,
      description: `${f.name} of the person`,
      propertyOptions: [],
      ...f,
    };
    store.properties.set(prop.propertyId, prop);
    if (prop.isUnique) store.trackUniqueProperty(prop.propertyId);
  }
  store.ids.observe(`property_${sizes.properties}`);
}

function seedCustomIncentives(store: Store): void {
  const list: (Partial<CustomIncentive> & Pick<CustomIncentive, "name" | "type">)[] = [
    { name: "Gift description", description: "A gift described in words", type: "STRING", options: [] },
    { name: "Points", description: "Loyalty points", type: "NUMBER", options: [] },
    { name: "Voucher", description: "A voucher with a money value", type: "MONETARY", options: [] },
    {
      name: "Swag",
      description: "A thank-you item",
      type: "SINGLE_SELECT",
      options: [{ name: "T-shirt" }, { name: "Mug" }, { name: "Tote bag" }],
    },
  ];
  list.forEach((c, i) => {
    const id = `custom_incentive_${i + 1}`;
    store.customIncentives.set(id, { customIncentiveId: id, ...c });
  });
  store.ids.observe(`custom_incentive_${list.length}`);
}

function seedPeople(store: Store, rng: Prng, sizes: SeedSizes): void {
  // Shared immutable arrays and strings keep a million people small.
  const populationLists = [...store.populations.keys()].map((id) => [id]);
  const dates: string[] = [];
  for (let d = 0; d < 365; d++)
    dates.push(new Date(Date.UTC(2025, 0, 1) + d * DAY).toISOString().slice(0, 10));
  for (let n = 1; n <= sizes.people; n++) {
    const first = rng.pick(FIRST_NAMES);
    const last = rng.pick(LAST_NAMES);
    const isOptedOut = rng.chance(0.05);
    const properties: PersonRecord["properties"] = [{ propertyId: "property_1", value: `EXT-${n}` }];
    if (n % 2 === 0) properties.push({ propertyId: "property_2", value: `CRM-${n}` });
    if (n % 3 === 0) properties.push({ propertyId: "property_3", value: rng.pick(COUNTRIES) });
    if (n % 5 === 0) properties.push({ propertyId: "property_5", value: rng.pick(JOB_TITLES) });
    store.addPerson({
      personId: `person_${n}`,
      email: `${first.toLowerCase()}.${last.toLowerCase()}.${n}@example.com`,
      phone: `+1555${String(n).padStart(7, "0")}`,
      firstName: first,
      lastName: last,
      isOptedOut,
      contactStatus: contactStatusFor(isOptedOut),
      lastContactDate: n % 4 === 0 ? null : rng.pick(dates),
      additionalEmails: n % 20 === 0 ? [`${first.toLowerCase()}.${n}@work.example.com`] : EMPTY,
      additionalPhones: n % 25 === 0 ? [`+1556${String(n).padStart(7, "0")}`] : EMPTY,
      properties,
      populationIds: populationLists[(n - 1) % populationLists.length] ?? EMPTY,
    });
  }
}

function seedStudies(store: Store, rng: Prng, sizes: SeedSizes): void {
  const userIds = [...store.users.keys()];
  const personIds = sizes.people;
  const created = Date.UTC(2025, 8, 1);
  for (let s = 1; s <= sizes.studies; s++) {
    const fixed = FIXED_STUDIES[s - 1];
    const type =
      fixed?.type ?? rng.pick(["SURVEY", "INTERVIEWS", "UNMODERATED_TEST", "GROUP_INTERVIEW"] as const);
    const status = fixed?.status ?? rng.pick(["DRAFT", "ACTIVE", "PAUSED", "CLOSED"] as const);
    const screenerKind =
      fixed?.screener ?? (type === "SURVEY" ? "none" : rng.pick(["NATIVE", "none"] as const));
    const studyId = `study_${s}`;
    const owner = store.users.get(rng.pick(userIds));
    const createdAt = new Date(created + s * 3_600_000).toISOString();
    const study = studyRecord({
      studyId,
      n: s,
      type,
      status,
      screenerKind,
      strategy: fixed?.strategy,
      owner,
      createdAt,
    });
    store.studies.set(studyId, study);
    if (screenerKind !== "none")
      store.screeners.set(studyId, seededScreener(store, studyId, screenerKind, fixed?.templates, createdAt));

    const count = Math.min(sizes.participantsPerStudy, personIds);
    const start = personIds === 0 ? 0 : ((s - 1) * 7919) % personIds;
    for (let i = 0; i < count; i++) {
      const personId = `person_${((start + i) % personIds) + 1}`;
      const added = created + s * 3_600_000 + i * 60_000;
      const status = rng.pick(PARTICIPANT_STATUSES);
      const p: Participant = {
        participantId: store.ids.next("participant"),
        personId,
        studyId,
        status,
        approvalStatus: rng.pick(APPROVAL_STATUSES),
        screenerState: rng.pick(SCREENER_STATES),
        addedToStudyAt: new Date(added).toISOString(),
        invitedToStudyAt: new Date(added + 3_600_000).toISOString(),
      };
      if (p.screenerState !== "NOT_SENT") p.screenerSentAt = new Date(added + 7_200_000).toISOString();
      if (p.approvalStatus === "APPROVED") p.approvedAt = new Date(added + DAY).toISOString();
      if (status === "SCHEDULED" || status === "COMPLETED") {
        p.interviewStartTime = new Date(added + 3 * DAY).toISOString();
        p.screenerResponseDate = new Date(added + DAY / 2).toISOString();
      }
      if (status === "COMPLETED") p.testCompletedAt = new Date(added + 3 * DAY + 3_600_000).toISOString();
      if (i % 10 === 0)
        p.note = { note: "Great fit for the study", createdByUserId: owner?.userId ?? "user_1" };
      store.addParticipant(p);
    }
  }
}

export interface StudySpec {
  studyId: string;
  n: number;
  type: Study["studyType"];
  status: Study["status"];
  screenerKind: "none" | Screener["type"];
  strategy?: Study["recruitmentStrategy"] | undefined;
  owner: User | undefined;
  createdAt: string;
  name?: string | undefined;
}

/** A study as the seed makes them; the admin API's quick study creation uses it too. */
export function studyRecord(spec: StudySpec): Study {
  const { studyId, n: s, type, status, screenerKind, owner, createdAt } = spec;
  const study: Study = {
    studyId,
    studyType: type,
    recruitmentStrategy: spec.strategy ?? "IN_SERVICE",
    status,
    studyPlan: {
      name: spec.name ?? `Study ${s}: ${type.toLowerCase().replace("_", " ")}`,
      externalName: `Research study ${s}`,
      description: `Internal description of study ${s}`,
      externalDescription: `Help us improve our product (study ${s})`,
      startDate: "2026-01-05",
      endDate: "2026-12-18",
      researchPlanUrl: `https://docs.example.com/research-plans/${s}`,
      participationLimit: 10 + (s % 5) * 10,
      consentFormId: `consent_form_${(s % 3) + 1}`,
      incentive: {
        incentiveType: "MONEY_OR_GIFT_CARD",
        incentiveBudgetId: `budget_${(s % 2) + 1}`,
        amount: 25 + (s % 4) * 25,
        customIncentiveId: `custom_incentive_${(s % 4) + 1}`,
        defaultCustomIncentiveValue: "Thank-you gift",
        currency: "USD",
      },
      includeScreener: screenerKind !== "none",
      brandingConfigId: "branding_1",
      language: "en",
      // Every study carries the scheduler object: the spec lists it on the plan without conditions.
      scheduler: { interviewDurationMinutes: type === "GROUP_INTERVIEW" ? 60 : 30 },
    },
    createdAt,
    createdFromTemplateId: s % 4 === 0 ? "study_template_1" : null,
    owners: owner
      ? [
          {
            userId: owner.userId,
            emailAccountId: owner.emailAccountId,
            fullname: owner.fullname,
            email: owner.email,
          },
        ]
      : [],
  };
  return study;
}

export function seededScreener(
  store: Store,
  studyId: string,
  type: Screener["type"],
  templates: number[] | undefined,
  createdAt: string,
): Screener {
  const screener = newNativeScreener(store, studyId, createdAt);
  screener.type = type;
  if (type === "NATIVE") {
    const requests = [
      {
        category: "simple",
        type: "SHORT_FORM",
        name: "What is your job title?",
        mappedToPropertyId: "property_5",
      },
      {
        category: "option",
        type: "MULTI_SELECT",
        name: "Which devices do you use?",
        includeOther: true,
        otherDisplayText: "Something else",
        options: [{ value: "Phone" }, { value: "Tablet" }, { value: "Laptop" }],
      },
      ...(templates ?? []).map((t) => ({
        category: "template",
        questionTemplateId: `question_template_${t}`,
      })),
    ];
    screener.questions = requests.map((r): Question => buildQuestion(store, QuestionRequest.parse(r)));
    screener.qualifyByDefault = true;
  } else if (type === "CUSTOM_LINK") {
    screener.customLinkUrl = "https://forms.example.com/screener";
    screener.customLinkTokensJson = JSON.stringify({ pid: "participantId" });
  } else {
    screener.externalSurveyId = `external_survey_${studyId}`;
    if (type === "SURVEY_PROVIDER_A") screener.surveyProviderCollectorId = `collector_${studyId}`;
    screener.externalSurveySetupStatus = type === "FORM_PROVIDER_B" ? "FAILED" : "READY";
    if (type === "FORM_PROVIDER_B") screener.externalSurveySetupErrorCode = "FORM_NOT_FOUND";
    screener.externalSurveySetupUpdatedAt = createdAt;
  }
  return screener;
}

/**
 * The first ten incentives are fixed around the expiry rule (spec 3.4): sent
 * after 2026-01-31 and unclaimed for a year expires; on or before it never does.
 */
const FIXED_INCENTIVES: readonly Pick<Incentive, "type" | "status" | "sentAt">[] = [
  { type: "MONEY_OR_GIFT_CARD", status: "UNCLAIMED", sentAt: "2026-03-15T10:00:00.000Z" },
  { type: "MONEY_OR_GIFT_CARD", status: "UNCLAIMED", sentAt: "2025-11-20T10:00:00.000Z" },
  { type: "RECRUITMENT_FEE", status: "CLAIMED", sentAt: "2026-02-10T10:00:00.000Z" },
  { type: "RESPONDENT_MONEY", status: "CANCELED", sentAt: "2025-12-01T10:00:00.000Z" },
  { type: "MONEY_OR_GIFT_CARD", status: "ERROR", sentAt: "2026-04-01T10:00:00.000Z" },
  { type: "RESPONDENT_MONEY", status: "EXPIRED", sentAt: "2026-02-01T09:00:00.000Z" },
  { type: "CUSTOM", status: "SENT", sentAt: "2026-05-05T10:00:00.000Z" },
  { type: null, status: "CLAIMED", sentAt: "2025-10-10T10:00:00.000Z" },
  { type: "MONEY_OR_GIFT_CARD", status: "UNCLAIMED", sentAt: "2026-01-31T23:30:00.000Z" },
  { type: "RESPONDENT_MONEY", status: "UNCLAIMED", sentAt: "2026-02-01T00:00:00.000Z" },
];

function seedIncentives(store: Store, rng: Prng, sizes: SeedSizes): void {
  const studies = [...store.studies.keys()];
  const moneyStatuses = ["UNCLAIMED", "CLAIMED", "CANCELED", "ERROR"] as const;
  for (let i = 1; i <= sizes.incentives; i++) {
    const fixed = FIXED_INCENTIVES[i - 1];
    const type = fixed ? fixed.type : rng.pick(INCENTIVE_TYPES);
    const status = fixed ? fixed.status : type === "CUSTOM" ? "SENT" : rng.pick(moneyStatuses);
    const sentAt =
      fixed?.sentAt ??
      new Date(Date.UTC(2025, 6, 1) + rng.int(0, 400) * DAY + rng.int(0, 86_399) * 1000).toISOString();
    const studyId = rng.pick(studies);
    const participant = store.participants.get(studyId)?.list[0];
    const person = participant ? store.people.get(participant.personId) : undefined;
    // incentive_8 stands for a deleted recipient: its email is null.
    const deleted = i === 8;
    const custom = type === "CUSTOM";
    const customId = `custom_incentive_${((i - 1) % 4) + 1}`;
    // Fields the spec types as plain strings are omitted, never null; only type and recipientEmail may be null.
    const incentive: Incentive = {
      incentiveId: `incentive_${i}`,
      type,
      amountCents: custom ? 0 : 500 * rng.int(1, 20),
      sentAt,
      recipientEmail: deleted ? null : (person?.email ?? `former.participant.${i}@example.com`),
      studyId,
      status,
    };
    if (!deleted && person) incentive.personId = person.personId;
    if (participant) incentive.participantId = participant.participantId;
    if (custom) {
      incentive.customIncentiveId = customId;
      incentive.customIncentiveValue = customValue(customId, i);
    } else {
      incentive.budgetId = `budget_${(i % 2) + 1}`;
    }
    store.incentives.set(incentive.incentiveId, incentive);
  }
}

function customValue(customIncentiveId: string, i: number): string {
  switch (customIncentiveId) {
    case "custom_incentive_1":
      return "A signed copy of our book";
    case "custom_incentive_2":
      return String(100 * i);
    case "custom_incentive_3":
      return "25.00";
    default:
      return "Mug";
  }
}

function seedEmails(store: Store, rng: Prng, sizes: SeedSizes, now: number): void {
  const users = [...store.users.values()];
  const studies = [...store.participants.entries()].filter(([, sp]) => sp.list.length > 0);
  if (studies.length === 0) return;
  // Scheduled messages are left out: every seeded message has been sent, so every field is set.
  const statuses = EMAIL_STATUSES.filter((s) => s !== "SCHEDULED");
  for (let i = 1; i <= sizes.emailMessages; i++) {
    const sender = rng.pick(users);
    const [studyId, sp] = rng.pick(studies);
    const participant = rng.pick(sp.list);
    const person = store.people.get(participant.personId);
    // Spread over the 90 days before now.
    const sentMs = now - rng.int(0, 89) * DAY - rng.int(0, 86_399) * 1000;
    const createdMs = sentMs - rng.int(1, 72) * 3_600_000;
    store.emailMessages.push({
      id: `email_${i}`,
      recipientId: participant.personId,
      senderId: sender.userId,
      status: rng.pick(statuses),
      type: rng.pick(EMAIL_TYPES),
      sentAt: new Date(sentMs).toISOString(),
      scheduledSendTime: new Date(sentMs).toISOString(),
      createdAt: new Date(createdMs).toISOString(),
      studyId,
      participantId: participant.participantId,
      messageCampaignId: `campaign_${rng.int(1, 10)}`,
      recipientEmail: person?.email ?? `former.participant.${i}@example.com`,
      senderEmail: sender.email,
      subject: rng.pick(EMAIL_SUBJECTS),
      teamId: sender.teamId,
      populationId: person?.populationIds[0] ?? null,
    });
  }
}
