import { z } from "zod";
import { notFound } from "../http-error.ts";
import { contactStatusFor, type PersonRecord } from "../store/records.ts";
import type { Store } from "../store/store.ts";
import type { Handler } from "./handler-types.ts";

const EmailAddress = z.email();

function setOptedOut(store: Store, people: PersonRecord[], isOptedOut: boolean): void {
  for (const p of people) {
    store.updatePerson(p, (x) => {
      x.isOptedOut = isOptedOut;
      x.contactStatus = contactStatusFor(isOptedOut);
    });
  }
}

/**
 * A value that is a valid email is looked up as an email only, never as an id
 * (spec 4.7), and finds a person by an additional email as well as by the
 * primary one: people carry several (spec 2.6, 4.4), and opting out is about
 * the mailbox. Every person with that email is updated: populations may hold
 * the same address more than once.
 */
export const updateOptedOut: Handler<"updateOptedOut"> = ({ store, clock }, { params, body }) => {
  const key = params.personIdOrEmail;
  const people = EmailAddress.safeParse(key).success
    ? store.peopleByAnyEmail(key)
    : [store.people.get(key)].filter((p): p is PersonRecord => p !== undefined);
  const first = people[0];
  if (!first) throw notFound("Person");
  setOptedOut(store, people, body.isOptedOut);
  return { personId: first.personId, isOptedOut: body.isOptedOut, updatedAt: clock.nowIso() };
};

/** Looks the email up as `updateOptedOut` does, which replaces this operation (spec 4.14). */
export const legacyOptOut: Handler<"legacyOptOut"> = ({ store }, { body }) => {
  const people = store.peopleByAnyEmail(body.email);
  if (people.length === 0) throw notFound("Person");
  setOptedOut(store, people, body.optedOut);
  return { email: body.email, optedOut: body.optedOut };
};
