import { z } from "zod";
import {
  CustomIncentive,
  EmailMessage,
  Incentive,
  Participant,
  PersonProperty,
  type Screener,
  Segment,
  Study,
} from "../../api/index.ts";
import { effectiveIncentiveStatus } from "../incentive-expiry.ts";
import { mappedPropertyIds } from "../screener-builder.ts";
import {
  ImportRecord,
  PersonRecord,
  Population,
  PropertyGroup,
  QuestionTemplate,
  Team,
  User,
} from "./records.ts";
import type { Store } from "./store.ts";

/**
 * The whole store as GET/PUT /__emulator/snapshot carry it: collections named
 * after the spec's resources, records in the spec's response shapes (studies
 * with their screener, participants with their contact fields, incentives with
 * the status they have on the emulator's clock and the email unmasked).
 * A missing collection is empty; an unknown key is refused, so a body that is
 * not a snapshot cannot pass for an empty one. A participant whose person or
 * study is not in it is refused too (see `participantsWithoutTheirRecords`),
 * and so is a second participant of one person in one study
 * (`participantsTwiceInAStudy`).
 */
export const Snapshot = z
  .strictObject({
    workspaceId: z.string().min(1).default("workspace_1"),
    studies: z.array(Study).default([]),
    questionTemplates: z.array(QuestionTemplate).default([]),
    people: z.array(PersonRecord).default([]),
    populations: z.array(Population).default([]),
    participants: z.array(Participant).default([]),
    personProperties: z.array(PersonProperty).default([]),
    propertyGroups: z.array(PropertyGroup).default([]),
    incentives: z.array(Incentive).default([]),
    customIncentives: z.array(CustomIncentive).default([]),
    emailMessages: z.array(EmailMessage).default([]),
    segments: z.array(Segment).default([]),
    teams: z.array(Team).default([]),
    users: z.array(User).default([]),
    imports: z.array(ImportRecord).default([]),
  })
  .superRefine((snap, ctx) => {
    for (const issue of participantsWithoutTheirRecords(snap)) ctx.addIssue({ code: "custom", ...issue });
    for (const issue of participantsTwiceInAStudy(snap)) ctx.addIssue({ code: "custom", ...issue });
  });
export type Snapshot = z.infer<typeof Snapshot>;

/**
 * A participant is served with its person's contact fields (spec 2.6) and
 * belongs to a study, so the service cannot hold one without either. Loaded
 * anyway, it would also hand its study to the next person created under the
 * missing person's id, or show in no study's search. A trimmed seed can leave
 * thousands such participants: the first few are named, the rest counted.
 */
const NAMED_PARTICIPANTS = 20;

interface ReferenceIssue {
  message: string;
  path: (string | number)[];
}

/** The first NAMED_PARTICIPANTS issues, then one at `["participants"]` counting the rest. */
function namedThenCounted(issues: Iterable<ReferenceIssue>, rest: (n: number) => string): ReferenceIssue[] {
  const named: ReferenceIssue[] = [];
  let unnamed = 0;
  for (const issue of issues) {
    if (named.length < NAMED_PARTICIPANTS) named.push(issue);
    else unnamed++;
  }
  if (unnamed > 0) named.push({ message: rest(unnamed), path: ["participants"] });
  return named;
}

function participantsWithoutTheirRecords(
  snap: Pick<Snapshot, "people" | "studies" | "participants">,
): ReferenceIssue[] {
  if (snap.participants.length === 0) return [];
  const people = new Set(snap.people.map((p) => p.personId));
  const studies = new Set(snap.studies.map((s) => s.studyId));
  function* issues(): Generator<ReferenceIssue> {
    for (const [i, p] of snap.participants.entries()) {
      for (const { field, message } of participantProblems(p, people, studies, "the snapshot")) {
        yield { message, path: ["participants", i, field] };
      }
    }
  }
  return namedThenCounted(
    issues(),
    (n) => `and ${n} more participants whose person or study is not in the snapshot`,
  );
}

/**
 * A person is a participant of a study once (an import of someone already in
 * the study updates the person and adds no participant, spec 4.4). Loaded,
 * the second record was silently dropped: the answer said loaded, and the
 * participant the snapshot named was not there.
 */
function participantsTwiceInAStudy(snap: Pick<Snapshot, "participants">): ReferenceIssue[] {
  if (snap.participants.length < 2) return [];
  const participants = snap.participants;
  function* issues(): Generator<ReferenceIssue> {
    // studyId → personId → index of the study's first participant of that person.
    const firstOf = new Map<string, Map<string, number>>();
    for (const [i, p] of participants.entries()) {
      let inStudy = firstOf.get(p.studyId);
      if (inStudy === undefined) {
        inStudy = new Map();
        firstOf.set(p.studyId, inStudy);
      }
      const first = inStudy.get(p.personId);
      if (first === undefined) inStudy.set(p.personId, i);
      else {
        yield {
          message: secondParticipation(p, participants[first] as Participant, `participants[${first}]`),
          path: ["participants", i, "personId"],
        };
      }
    }
  }
  return namedThenCounted(issues(), (n) => `and ${n} more participants of a person already in their study`);
}

/**
 * Why a participant cannot be loaded beside `first`, the same person's in the
 * same study: ids only, and how to mend it. `firstAt` says where `first` is.
 */
export function secondParticipation(
  p: Pick<Participant, "participantId" | "personId" | "studyId">,
  first: Pick<Participant, "participantId">,
  firstAt?: string,
): string {
  const where = firstAt === undefined ? "" : `, at ${firstAt}`;
  return `participant ${p.participantId} is person ${p.personId} in study ${p.studyId} again (first as participant ${first.participantId}${where}): a person is a participant of a study once; leave one out`;
}

/**
 * Why a participant cannot be loaded beside these people and studies, one
 * problem per missing record: ids only (never a person's contact fields),
 * and how to mend it.
 */
export function participantProblems(
  p: Pick<Participant, "participantId" | "personId" | "studyId">,
  people: ReadonlySet<string> | ReadonlyMap<string, unknown>,
  studies: ReadonlySet<string> | ReadonlyMap<string, unknown>,
  holder: string,
): { field: "personId" | "studyId"; message: string }[] {
  const out: { field: "personId" | "studyId"; message: string }[] = [];
  if (!people.has(p.personId)) {
    out.push({
      field: "personId",
      message: `participant ${p.participantId} is of person ${p.personId}, who is not in ${holder}: add the person or leave the participant out`,
    });
  }
  if (!studies.has(p.studyId)) {
    out.push({
      field: "studyId",
      message: `participant ${p.participantId} is of study ${p.studyId}, which is not in ${holder}: add the study or leave the participant out`,
    });
  }
  return out;
}

/** The keys a snapshot may hold. */
export const SNAPSHOT_COLLECTIONS = Object.keys(Snapshot.shape) as (keyof Snapshot)[];

/**
 * A participant as the spec returns it: its own fields plus the person's
 * contact fields. One fixed object shape (undefined fields vanish in JSON):
 * this runs for every participant of every page, and a monomorphic object
 * serialises markedly faster than a spread.
 */
export function participantView(p: Participant, person: PersonRecord | undefined): Participant {
  return {
    participantId: p.participantId,
    personId: p.personId,
    studyId: p.studyId,
    // Fields typed "string" by the spec are left out rather than null when the person lacks them.
    email: person?.email ?? undefined,
    additionalEmails: person?.additionalEmails ?? [],
    phone: person?.phone ?? undefined,
    additionalPhones: person?.additionalPhones ?? [],
    status: p.status,
    approvalStatus: p.approvalStatus,
    screenerState: p.screenerState,
    invitedToStudyAt: p.invitedToStudyAt,
    approvedAt: p.approvedAt,
    screenerSentAt: p.screenerSentAt,
    testCompletedAt: p.testCompletedAt,
    interviewStartTime: p.interviewStartTime,
    screenerResponseDate: p.screenerResponseDate,
    addedToStudyAt: p.addedToStudyAt,
    note: p.note,
  };
}

const JOINED = new Set([
  "participantId",
  "personId",
  "studyId",
  "email",
  "additionalEmails",
  "phone",
  "additionalPhones",
]);
function ownParticipantFields(p: Participant): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k in p) if (!JOINED.has(k)) out[k] = p[k];
  return out;
}

export function studyView(store: Store, study: Study): Study {
  return { ...study, screener: store.screeners.get(study.studyId) ?? null };
}

/** Every collection except people and participants, which can be large and are written piece by piece. */
export function smallCollections(store: Store, now: number): Omit<Snapshot, "people" | "participants"> {
  return {
    workspaceId: store.workspaceId,
    studies: [...store.studies.values()].map((s) => studyView(store, s)),
    questionTemplates: [...store.questionTemplates.values()],
    populations: [...store.populations.values()],
    personProperties: [...store.properties.values()],
    propertyGroups: [...store.propertyGroups.values()],
    incentives: [...store.incentives.values()].map((i) => ({
      ...i,
      status: effectiveIncentiveStatus(i, now),
    })),
    customIncentives: [...store.customIncentives.values()],
    emailMessages: [...store.emailMessages],
    segments: [...store.segments],
    teams: [...store.teams.values()],
    users: [...store.users.values()],
    imports: [...store.imports],
  };
}

export function* participantViews(store: Store): Generator<Participant> {
  for (const sp of store.participants.values()) {
    for (const p of sp.list) yield participantView(p, store.people.get(p.personId));
  }
}

/** The snapshot as JSON text in chunks, so a million people never become one giant string. */
export function* snapshotJsonChunks(store: Store, now: number): Generator<string> {
  const small = JSON.stringify(smallCollections(store, now));
  yield `${small.slice(0, -1)},"people":[`;
  yield* joined(store.people.values());
  yield `],"participants":[`;
  yield* joined(participantViews(store));
  yield "]}";
}

function* joined(items: Iterable<unknown>): Generator<string> {
  let batch: string[] = [];
  let first = true;
  for (const item of items) {
    batch.push(JSON.stringify(item));
    if (batch.length === 1000) {
      yield (first ? "" : ",") + batch.join(",");
      first = false;
      batch = [];
    }
  }
  if (batch.length > 0) yield (first ? "" : ",") + batch.join(",");
}

/**
 * Replaces the store's content with a snapshot. Every id a record names is
 * observed, not only the records' own: new ids continue after all of them,
 * so no new record takes the id of one left out that something still names.
 */
export function loadSnapshot(store: Store, snap: Snapshot): void {
  store.clear();
  store.workspaceId = snap.workspaceId;
  const observe = (id: string | null | undefined) => {
    if (id) store.ids.observe(id);
  };
  for (const t of snap.teams) store.teams.set(t.teamId, t);
  for (const u of snap.users) store.users.set(u.userId, u);
  for (const p of snap.populations) store.populations.set(p.populationId, p);
  for (const g of snap.propertyGroups) {
    store.propertyGroups.set(g.propertyGroupId, g);
    observe(g.propertyGroupId);
  }
  for (const p of snap.personProperties) {
    store.properties.set(p.propertyId, p);
    observe(p.propertyId);
    for (const o of p.propertyOptions ?? []) observe(o.propertyOptionId);
    if (p.isUnique) store.trackUniqueProperty(p.propertyId);
  }
  for (const t of snap.questionTemplates) {
    store.questionTemplates.set(t.questionTemplateId, t);
    observe(t.questionTemplateId);
  }
  for (const s of snap.studies) {
    const { screener, ...study } = s;
    store.studies.set(s.studyId, study as Study);
    observe(s.studyId);
    if (screener) loadScreener(store, screener);
  }
  for (const p of snap.people) loadPerson(store, p);
  for (const p of snap.participants) loadParticipant(store, p);
  // Messages and incentives outlive their recipient (spec 2.9: "null when the
  // recipient was deleted"); a new person or participant under the id they
  // name would become that recipient.
  for (const i of snap.incentives) {
    store.incentives.set(i.incentiveId, i);
    observe(i.incentiveId);
    observe(i.personId);
    observe(i.participantId);
    observe(i.studyId);
  }
  for (const c of snap.customIncentives) {
    store.customIncentives.set(c.customIncentiveId, c);
    observe(c.customIncentiveId);
  }
  for (const m of snap.emailMessages) {
    store.emailMessages.push(m);
    observe(m.id);
    observe(m.recipientId);
    observe(m.participantId);
    observe(m.studyId);
  }
  for (const s of snap.segments) {
    store.segments.push(s);
    observe(s.segmentId);
  }
  for (const i of snap.imports) {
    store.imports.push(i);
    observe(i.importId);
  }
}

export function loadScreener(store: Store, screener: Screener): void {
  store.screeners.set(screener.studyId, screener);
  store.ids.observe(screener.id);
  for (const q of screener.questions) {
    store.ids.observe(q.id);
    if (q.category === "option" || q.category === "dropdown")
      for (const o of q.options ?? []) if (o.id) store.ids.observe(o.id);
  }
  // A property created under a mapped id would be held back from deletion as mapped.
  for (const id of mappedPropertyIds(screener)) store.ids.observe(id);
}

/**
 * Adds a person from outside (snapshot, state file, admin API), replacing one
 * under the same id. The property ids their values name are observed: a
 * property not in the store must not come back as a new one holding them.
 */
export function loadPerson(store: Store, person: PersonRecord): void {
  store.addPerson(person);
  store.ids.observe(person.personId);
  for (const v of person.properties) store.ids.observe(v.propertyId);
}

export function loadParticipant(store: Store, view: Participant): void {
  const own = ownParticipantFields(view);
  store.addParticipant({
    participantId: view.participantId,
    personId: view.personId,
    studyId: view.studyId,
    ...own,
  });
  store.ids.observe(view.participantId);
}
