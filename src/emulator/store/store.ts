import type {
  CustomIncentive,
  EmailMessage,
  Incentive,
  Participant,
  PersonProperty,
  Screener,
  Segment,
  Study,
} from "../../api/index.ts";
import { IdSequence } from "./id-sequence.ts";
import { MultiIndex } from "./multi-index.ts";
import { normalizeEmail, normalizePhone } from "./normalize.ts";
import type {
  ImportRecord,
  PersonRecord,
  Population,
  PropertyGroup,
  QuestionTemplate,
  Team,
  User,
} from "./records.ts";

/**
 * An email message with the links the spec's shape leaves out but the search
 * restrictions need (team and population of the message).
 */
export type EmailMessageRecord = EmailMessage & { teamId?: string | null; populationId?: string | null };

/** A study's participants in the order they were added, and by person (a person joins a study once). */
export interface StudyParticipants {
  list: Participant[];
  byPerson: Map<string, Participant>;
}

/**
 * The whole workspace in memory. Records are plain objects; arrays inside a
 * person are replaced, never mutated, so seeding can share them.
 */
export class Store {
  workspaceId = "workspace_1";
  readonly studies = new Map<string, Study>();
  /** By studyId. */
  readonly screeners = new Map<string, Screener>();
  readonly questionTemplates = new Map<string, QuestionTemplate>();
  readonly people = new Map<string, PersonRecord>();
  readonly populations = new Map<string, Population>();
  /** By studyId. */
  readonly participants = new Map<string, StudyParticipants>();
  readonly properties = new Map<string, PersonProperty>();
  readonly propertyGroups = new Map<string, PropertyGroup>();
  readonly incentives = new Map<string, Incentive>();
  readonly customIncentives = new Map<string, CustomIncentive>();
  readonly emailMessages: EmailMessageRecord[] = [];
  readonly segments: Segment[] = [];
  readonly teams = new Map<string, Team>();
  readonly users = new Map<string, User>();
  readonly imports: ImportRecord[] = [];
  readonly ids = new IdSequence();

  readonly #byEmail = new MultiIndex();
  /**
   * Kept apart from #byEmail because an import matches on the primary email
   * only (the identifier names the field `email`), while a lookup of a person
   * by an email (spec 4.7, 4.14) finds them by any of theirs.
   */
  readonly #byAdditionalEmail = new MultiIndex();
  readonly #byPhone = new MultiIndex();
  /**
   * propertyId → value → personIds, for unique properties only. A value can
   * have several holders: nothing stops an import or a snapshot from giving
   * one person a value another holds (whether the service refuses it is not
   * shown), and with one id per value the first holder was lost from the
   * index once the second moved on.
   */
  readonly #byUnique = new Map<string, MultiIndex>();

  clear(): void {
    for (const m of [
      this.studies,
      this.screeners,
      this.questionTemplates,
      this.people,
      this.populations,
      this.participants,
      this.properties,
      this.propertyGroups,
      this.incentives,
      this.customIncentives,
      this.teams,
      this.users,
    ]) {
      m.clear();
    }
    this.emailMessages.length = 0;
    this.segments.length = 0;
    this.imports.length = 0;
    this.ids.clear();
    this.#byEmail.clear();
    this.#byAdditionalEmail.clear();
    this.#byPhone.clear();
    this.#byUnique.clear();
  }

  // ---- people ----

  /**
   * Adds a person, or replaces the one the store holds under the same id (a
   * snapshot or state file may list an id twice): the earlier record's email,
   * phone and unique values leave the indexes, or lookups would still find
   * the person by them.
   */
  addPerson(person: PersonRecord): void {
    const earlier = this.people.get(person.personId);
    if (earlier !== undefined) this.#unindex(earlier);
    this.people.set(person.personId, person);
    // The indexes hold ids of people in the store only (people leave it only
    // through clear(), which empties the indexes too, or through the unindex
    // above), so an id the store did not have until now is under no key of theirs.
    this.#index(person, earlier === undefined);
  }

  /** Applies `change` to a person and keeps the email, phone and unique-property indexes right. */
  updatePerson(person: PersonRecord, change: (p: PersonRecord) => void): void {
    this.#unindex(person);
    change(person);
    this.#index(person);
  }

  /** By primary email only: what an import matches on. */
  peopleByEmail(email: string): PersonRecord[] {
    return this.#resolve(this.#byEmail.get(normalizeEmail(email)));
  }
  /**
   * Everyone who has this email as their primary or an additional one, each
   * once, those whose primary it is first: a caller that names one person
   * names the one the address belongs to most directly.
   */
  peopleByAnyEmail(email: string): PersonRecord[] {
    const key = normalizeEmail(email);
    const primary = this.#byEmail.get(key);
    const additional = this.#byAdditionalEmail.get(key);
    if (additional.length === 0) return this.#resolve(primary);
    return this.#resolve([...new Set([...primary, ...additional])]);
  }
  peopleByPhone(phone: string): PersonRecord[] {
    return this.#resolve(this.#byPhone.get(normalizePhone(phone)));
  }
  /** peopleByEmail(email).find(accept), without building the two lists on the way. */
  findPersonByEmail(email: string, accept: (p: PersonRecord) => boolean): PersonRecord | undefined {
    return this.#first(this.#byEmail.lookup(normalizeEmail(email)), accept);
  }
  /** peopleByPhone(phone).find(accept), without building the two lists on the way. */
  findPersonByPhone(phone: string, accept: (p: PersonRecord) => boolean): PersonRecord | undefined {
    return this.#first(this.#byPhone.lookup(normalizePhone(phone)), accept);
  }
  /** The first holder of a unique property's value (in the order they came to hold it) whom `accept` takes. */
  findPersonByUniqueValue(
    propertyId: string,
    value: unknown,
    accept: (p: PersonRecord) => boolean,
  ): PersonRecord | undefined {
    return this.#first(this.#byUnique.get(propertyId)?.lookup(uniqueKey(value)), accept);
  }

  /** Starts indexing a property's values once it is unique (seeding and loading call this before adding people). */
  trackUniqueProperty(propertyId: string): void {
    if (!this.#byUnique.has(propertyId)) this.#byUnique.set(propertyId, new MultiIndex());
  }

  /** Removes a property's values from every person (bulk deletion, spec 4.8). */
  dropPropertyValues(propertyId: string): void {
    this.#byUnique.delete(propertyId);
    for (const p of this.people.values()) {
      if (p.properties.some((v) => v.propertyId === propertyId)) {
        p.properties = p.properties.filter((v) => v.propertyId !== propertyId);
      }
    }
  }

  #first(
    ids: string | readonly string[] | undefined,
    accept: (p: PersonRecord) => boolean,
  ): PersonRecord | undefined {
    if (ids === undefined) return undefined;
    if (typeof ids === "string") {
      const p = this.people.get(ids);
      return p && accept(p) ? p : undefined;
    }
    for (const id of ids) {
      const p = this.people.get(id);
      if (p && accept(p)) return p;
    }
    return undefined;
  }

  #resolve(ids: readonly string[]): PersonRecord[] {
    const out: PersonRecord[] = [];
    for (const id of ids) {
      const p = this.people.get(id);
      if (p) out.push(p);
    }
    return out;
  }

  #index(p: PersonRecord, isNew = false): void {
    if (p.email) this.#byEmail.add(normalizeEmail(p.email), p.personId, isNew);
    // Not `isNew`: a list may hold one address twice (in other capitals), which would index the person twice.
    for (const e of p.additionalEmails) this.#byAdditionalEmail.add(normalizeEmail(e), p.personId);
    if (p.phone) this.#byPhone.add(normalizePhone(p.phone), p.personId, isNew);
    for (const { propertyId, value } of p.properties) {
      const idx = this.#byUnique.get(propertyId);
      if (idx && value !== null) idx.add(uniqueKey(value), p.personId, isNew);
    }
  }

  #unindex(p: PersonRecord): void {
    if (p.email) this.#byEmail.remove(normalizeEmail(p.email), p.personId);
    for (const e of p.additionalEmails) this.#byAdditionalEmail.remove(normalizeEmail(e), p.personId);
    if (p.phone) this.#byPhone.remove(normalizePhone(p.phone), p.personId);
    for (const { propertyId, value } of p.properties) {
      const idx = this.#byUnique.get(propertyId);
      if (idx && value !== null) idx.remove(uniqueKey(value), p.personId);
    }
  }

  // ---- participants ----

  studyParticipants(studyId: string): StudyParticipants {
    let sp = this.participants.get(studyId);
    if (!sp) {
      sp = { list: [], byPerson: new Map() };
      this.participants.set(studyId, sp);
    }
    return sp;
  }

  /**
   * Drops what belongs to a study besides its record: screener, participants,
   * email messages, incentives and import records. People stay: they belong
   * to the workspace, not to a study.
   */
  dropStudyContents(studyId: string): void {
    this.screeners.delete(studyId);
    this.participants.delete(studyId);
    removeWhere(this.emailMessages, (m) => m.studyId === studyId);
    for (const [id, i] of this.incentives) if (i.studyId === studyId) this.incentives.delete(id);
    removeWhere(this.imports, (i) => i.studyId === studyId);
  }

  /** Adds a person to a study unless already there; a person is a participant of a study once. */
  addParticipant(participant: Participant): Participant {
    const sp = this.studyParticipants(participant.studyId);
    const existing = sp.byPerson.get(participant.personId);
    if (existing) return existing;
    sp.list.push(participant);
    sp.byPerson.set(participant.personId, participant);
    return participant;
  }
}

/** Filters in place: the store's arrays are `readonly` fields, the same array for as long as the store lives. */
function removeWhere<T>(items: T[], drop: (item: T) => boolean): void {
  let kept = 0;
  for (const item of items) if (!drop(item)) items[kept++] = item;
  items.length = kept;
}

function uniqueKey(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value);
}
