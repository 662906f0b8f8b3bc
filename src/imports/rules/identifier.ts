import type { ImportPerson } from "../../api/index.ts";

/** The value of a person that the identifier names, as the dedupe key. */
export function identifierKey(person: ImportPerson, identifier: string): string | undefined {
  if (identifier === "email") return person.email?.toLowerCase();
  if (identifier === "phone") return person.phone;
  const id = identifier.slice("property:".length);
  for (const p of person.properties ?? []) {
    if ("propertyId" in p && p.propertyId === id && p.value !== null && p.value !== "") {
      return Array.isArray(p.value) ? p.value.join(";") : String(p.value);
    }
  }
  return undefined;
}

/** The request's identifier selector for a job's `identifier`. */
export function identifierSelector(identifier: string): string {
  return identifier.startsWith("property:") ? identifier.slice("property:".length) : identifier;
}
