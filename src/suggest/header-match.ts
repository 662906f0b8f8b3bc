import { foldAccents } from "./fold-accents.ts";
import {
  CONSENT_PHRASES,
  CONSENT_VETO_WORDS,
  CONTAINED_PHRASES,
  EXACT_HEADERS,
  FULL_NAME_HEADERS,
  type HeaderKind,
  type Language,
  NOT_PERSON_WORDS,
  OTHER_WORDS,
  VETO_WORDS,
} from "./header-words.ts";

/**
 * A header as the word lists write it: camelCase split, accents dropped,
 * lower case, "E-Mail" as "email", words separated by one space.
 *
 * @example headerKey("E-Mail-Adresse") === "email adresse"; headerKey("HasOptedOutOfEmail") === "has opted out of email"
 */
export function headerKey(header: string): string {
  const words = header.replace(/([a-z])([A-Z])/g, "$1 $2").replace(/ß/g, "ss");
  return foldAccents(words)
    .replace(/\be[\s_.-]*mails?\b/g, "email")
    .replace(/\bemails\b/g, "email")
    .split(/[^a-z0-9]+/)
    .filter(Boolean)
    .join(" ");
}

/** What a header alone says about its column. */
export type HeaderReading =
  | { kind: HeaderKind; level: "exact" | "contains"; language?: Language }
  | { fullName: true; key: string }
  | { notPerson: string }
  | { unknown: true };

const EXACT = new Map<string, { kind: HeaderKind; language: Language }>();
for (const [kind, byLanguage] of Object.entries(EXACT_HEADERS) as [
  HeaderKind,
  Partial<Record<Language, readonly string[]>>,
][]) {
  for (const [language, phrases] of Object.entries(byLanguage) as [Language, readonly string[]][]) {
    for (const p of phrases) if (!EXACT.has(p)) EXACT.set(p, { kind, language });
  }
}

function containsPhrase(tokens: readonly string[], phrase: string): boolean {
  const words = phrase.split(" ");
  for (let i = 0; i + words.length <= tokens.length; i++) {
    if (words.every((w, j) => tokens[i + j] === w)) return true;
  }
  return false;
}

/** The kind a longer header names, when it names exactly one and nothing vetoes it. */
function readContained(tokens: readonly string[]): HeaderKind | undefined {
  if (tokens.some((t) => VETO_WORDS.has(t))) return undefined;
  const kinds = new Set<HeaderKind>();
  for (const { phrase, kind } of CONTAINED_PHRASES) if (containsPhrase(tokens, phrase)) kinds.add(kind);
  // "Mobile Phone" names both phone kinds: the other one.
  if (kinds.has("phone") && kinds.has("phone-other")) kinds.delete("phone");
  if (kinds.size !== 1) return undefined;
  const [kind] = kinds as unknown as [HeaderKind];
  const other = tokens.some((t) => OTHER_WORDS.has(t));
  if (kind === "email" && other) return "email-other";
  if (kind === "phone" && other) return "phone-other";
  return kind;
}

/** The consent kind a longer header names ("Email Opt-In"), when it names one and nothing vetoes it. */
function readConsent(tokens: readonly string[]): "optedOut" | "consent" | undefined {
  if (tokens.some((t) => CONSENT_VETO_WORDS.has(t))) return undefined;
  const kinds = new Set(CONSENT_PHRASES.filter((p) => containsPhrase(tokens, p.phrase)).map((p) => p.kind));
  return kinds.size === 1 ? [...kinds][0] : undefined;
}

/**
 * Reads a header: a whole-header synonym first, then a full name, then a
 * consent phrase inside a longer header, then a person word inside it, then
 * a word of what is no person field.
 */
export function readHeader(header: string): HeaderReading {
  const key = headerKey(header);
  const exact = EXACT.get(key);
  if (exact) return { kind: exact.kind, level: "exact", language: exact.language };
  if (FULL_NAME_HEADERS.has(key)) return { fullName: true, key };
  const tokens = key.split(" ");
  const consent = readConsent(tokens);
  if (consent) return { kind: consent, level: "contains" };
  const contained = readContained(tokens);
  if (contained) return { kind: contained, level: "contains" };
  const word = tokens.find((t) => NOT_PERSON_WORDS.has(t));
  if (word) return { notPerson: word };
  return { unknown: true };
}
