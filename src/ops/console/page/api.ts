import type { z } from "zod";
import { CONSOLE_HEADER, Refusal } from "../api-contract.ts";

/** A request the server refused: its code and what is wrong at each path (docs/errors.md). */
export class Refused extends Error {
  readonly code: string | undefined;
  readonly problems: NonNullable<Refusal["problems"]>;

  constructor(message: string, refusal?: Refusal) {
    super(refusal?.message ?? message);
    this.name = "Refused";
    this.code = refusal?.error;
    this.problems = refusal?.problems ?? [];
  }
}

/** What a failure says to a person, and the paths it names. */
export function reasonOf(err: unknown): { message: string; problems: Refused["problems"] } {
  if (err instanceof Refused) return { message: err.message, problems: err.problems };
  return { message: err instanceof Error ? err.message : String(err), problems: [] };
}

function jsonOf(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * Calls the console's API and parses the answer with its schema, the one the
 * server builds it to (answers.ts). A refusal throws `Refused`; an answer the
 * schema does not take (a page older than its server) throws, naming the path.
 */
export async function call<S extends z.ZodType>(
  schema: S,
  method: "GET" | "POST",
  url: string,
  body?: FormData | object,
): Promise<z.infer<S>> {
  const headers: Record<string, string> = { [CONSOLE_HEADER.name]: CONSOLE_HEADER.value };
  const init: RequestInit = { method, headers };
  if (body instanceof FormData) init.body = body;
  else if (body !== undefined) {
    headers["content-type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const res = await fetch(url, init);
  const text = await res.text();
  const data = jsonOf(text);
  if (!res.ok) {
    const refusal = Refusal.safeParse(data);
    throw new Refused(text || `${res.status} ${res.statusText}`, refusal.success ? refusal.data : undefined);
  }
  const parsed = schema.safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(
      `the server's answer to ${method} ${url} is not what this page reads (${issue ? `${issue.path.join(".") || "the answer"}: ${issue.message}` : "not JSON"}): reload the page`,
    );
  }
  return parsed.data;
}
