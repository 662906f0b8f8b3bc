import {
  type ImportPerson,
  type Participant,
  type PersonPropertyInput,
  requestCursor,
  type ValidationErrorItem,
} from "../../api/index.ts";
import { notFound, validationFailed } from "../http-error.ts";
import { decodeCursor, pageOf } from "../paging.ts";
import { NO_PROPERTY_VALUES, NO_STRINGS, ownStrings } from "../store/empty-lists.ts";
import { contactStatusFor, newContactFields, type PersonRecord } from "../store/records.ts";
import type { Store } from "../store/store.ts";
import type { Handler } from "./handler-types.ts";
import { participantJson } from "./participant-json.ts";
import { PreSerialized } from "./pre-serialized.ts";

export const searchParticipants: Handler<"searchParticipants"> = ({ store }, { params, body }) => {
  if (!store.studies.has(params.studyId)) throw notFound("Study");
  const list = store.participants.get(params.studyId)?.list ?? [];
  const offset = decodeCursor(requestCursor(body.pageInfo), ["pageInfo", "startCursor"]);
  const page = pageOf(list, offset, body.pageInfo?.size, (p) =>
    participantJson(p, store.people.get(p.personId)),
  );
  return new PreSerialized(
    `{"results":[${page.results.join(",")}],"total":${page.total},"pageInfo":${JSON.stringify(page.pageInfo)}}`,
  );
};

/** Finds a property by name the way a person would: ignoring case and surrounding spaces. */
function propertyIdByName(store: Store, name: string): string | undefined {
  const wanted = name.trim().toLowerCase();
  for (const p of store.properties.values()) if (p.name.trim().toLowerCase() === wanted) return p.propertyId;
  return undefined;
}

/**
 * POST /studies/{studyId}/participants/import (spec 4.4). Everything that can
 * refuse the request is checked first, so a refused import changes nothing;
 * then properties named by name and type are created, then people are matched
 * by the identifier (within the population when one is given), updated or
 * created, and made participants of the study once.
 */
export const importParticipants: Handler<"importParticipants"> = ({ store, clock }, { params, body }) => {
  const study = store.studies.get(params.studyId);
  if (!study) throw notFound("Study");
  const identifier = body.identifier;
  const populationId = body.populationId;
  if (populationId !== undefined && !store.populations.has(populationId)) throw notFound("Population");
  if (identifier !== "email" && identifier !== "phone") {
    const prop = store.properties.get(identifier);
    // The spec lists "400 JSON" for this operation, so refusals point at the selector.
    if (!prop) {
      throw validationFailed([
        { message: `Identifier property ${identifier} does not exist`, path: ["identifier"] },
      ]);
    }
    if (!prop.isUnique) {
      throw validationFailed([
        {
          message: `Identifier property ${identifier} is not unique: match by email, phone or a unique property`,
          path: ["identifier"],
        },
      ]);
    }
  }

  const errors: ValidationErrorItem[] = [];
  body.people.forEach((person, i) => {
    person.properties?.forEach((prop, j) => {
      if ("propertyId" in prop && !store.properties.has(prop.propertyId)) {
        errors.push({ message: "Property not found", path: ["people", i, "properties", j, "propertyId"] });
      }
    });
  });
  if (errors.length > 0) throw validationFailed(errors);

  // Spec 4.4 (4): a property named by name and type is created before the import begins.
  const idByName = new Map<string, string>();
  for (const person of body.people) {
    if (person.properties === undefined) continue;
    for (const prop of person.properties) {
      if (!("name" in prop) || idByName.has(prop.name.trim().toLowerCase())) continue;
      let id = propertyIdByName(store, prop.name);
      if (id === undefined) {
        id = store.ids.next("property");
        store.properties.set(id, {
          propertyId: id,
          name: prop.name.trim(),
          propertyType: prop.propertyType,
          propertyOptions: [],
          isUnique: false,
          isPHI: false,
          isPII: false,
          description: "",
        });
      }
      idByName.set(prop.name.trim().toLowerCase(), id);
    }
  }

  const now = clock.nowIso();
  // Made once per request: the test each lookup applies to the people it finds.
  const inScope =
    populationId === undefined ? anyone : (p: PersonRecord) => p.populationIds.includes(populationId);
  for (const input of body.people) {
    const values = input.properties === undefined ? NO_VALUES : propertyValues(input.properties, idByName);
    let person = findPerson(store, identifier, input, values, inScope);
    if (person) {
      updatePerson(store, person, input, values, populationId);
    } else {
      person = createPerson(store, input, values, populationId);
    }
    const participant: Participant = {
      participantId: "",
      personId: person.personId,
      studyId: study.studyId,
      status: "NOT_STARTED",
      approvalStatus: "HIDDEN",
      screenerState: "SCREENER_SENT",
      addedToStudyAt: now,
    };
    // A person joins a study once: addParticipant hands back the participant
    // already there, and only one that was added takes a new id. (Asking first
    // whether the person is in the study would look them up twice.)
    if (store.addParticipant(participant) === participant) {
      participant.participantId = store.ids.next("participant");
    }
  }

  const importId = store.ids.next("import");
  store.imports.push({
    importId,
    studyId: study.studyId,
    count: body.people.length,
    identifier,
    populationId: populationId ?? null,
    createdAt: now,
  });
  return {
    message: `Imported ${body.people.length} people into study ${study.studyId}`,
    count: body.people.length,
    importId,
  };
};

type Values = { propertyId: string; value: PersonRecord["properties"][number]["value"] }[];
/** The values of a person given without properties (most people of most imports). */
const NO_VALUES: Values = NO_PROPERTY_VALUES;

function propertyValues(input: PersonPropertyInput[], idByName: Map<string, string>): Values {
  return input.map((p) =>
    "propertyId" in p
      ? { propertyId: p.propertyId, value: p.value }
      : { propertyId: idByName.get(p.name.trim().toLowerCase()) as string, value: p.value },
  );
}

/** The scope of an import without a population: the whole workspace. */
const anyone = (_p: PersonRecord): boolean => true;

function findPerson(
  store: Store,
  identifier: string,
  input: ImportPerson,
  values: Values,
  inScope: (p: PersonRecord) => boolean,
): PersonRecord | undefined {
  if (identifier === "email") {
    return input.email === undefined ? undefined : store.findPersonByEmail(input.email, inScope);
  }
  if (identifier === "phone") {
    return input.phone === undefined ? undefined : store.findPersonByPhone(input.phone, inScope);
  }
  const value = values.find((v) => v.propertyId === identifier)?.value;
  if (value === undefined || value === null) return undefined;
  return store.findPersonByUniqueValue(identifier, value, inScope);
}

function mergeValues(current: PersonRecord["properties"], values: Values): PersonRecord["properties"] {
  if (values.length === 0) return current;
  const byId = new Map(current.map((v) => [v.propertyId, v.value]));
  for (const v of values) byId.set(v.propertyId, v.value);
  return [...byId].map(([propertyId, value]) => ({ propertyId, value }));
}

/** Supplied fields overwrite; absent ones stay; a null first or last name overwrites (spec 4.4 (3)). */
function updatePerson(
  store: Store,
  person: PersonRecord,
  input: ImportPerson,
  values: Values,
  populationId: string | undefined,
): void {
  store.updatePerson(person, (p) => {
    if (input.email !== undefined) p.email = input.email;
    if (input.phone !== undefined) p.phone = input.phone;
    if (input.firstName !== undefined) p.firstName = input.firstName;
    if (input.lastName !== undefined) p.lastName = input.lastName;
    if (input.isOptedOut !== undefined) {
      p.isOptedOut = input.isOptedOut;
      p.contactStatus = contactStatusFor(input.isOptedOut);
    }
    if (input.lastContactDate !== undefined) p.lastContactDate = input.lastContactDate;
    if (input.additionalEmails !== undefined) p.additionalEmails = ownStrings(input.additionalEmails);
    if (input.additionalPhones !== undefined) p.additionalPhones = ownStrings(input.additionalPhones);
    p.properties = mergeValues(p.properties, values);
    if (populationId !== undefined && !p.populationIds.includes(populationId)) {
      p.populationIds = [...p.populationIds, populationId];
    }
  });
}

function createPerson(
  store: Store,
  input: ImportPerson,
  values: Values,
  populationId: string | undefined,
): PersonRecord {
  const person: PersonRecord = {
    personId: store.ids.next("person"),
    ...newContactFields(input),
    additionalEmails: ownStrings(input.additionalEmails),
    additionalPhones: ownStrings(input.additionalPhones),
    properties: mergeValues(NO_PROPERTY_VALUES, values),
    populationIds: populationId === undefined ? NO_STRINGS : [populationId],
  };
  store.addPerson(person);
  return person;
}
