import type { ApiClient, PersonProperty } from "../api/index.ts";

/**
 * The person properties of the given property groups (spec 4.9), each once:
 * what columns left over are matched to by name.
 */
export async function fetchWorkspaceProperties(
  client: ApiClient,
  propertyGroupIds: readonly string[],
  signal?: AbortSignal,
): Promise<PersonProperty[]> {
  const seen = new Map<string, PersonProperty>();
  for (const groupId of new Set(propertyGroupIds)) {
    for await (const page of client.propertyGroupPages(groupId, signal ? { signal } : {})) {
      for (const p of page.results) if (!seen.has(p.propertyId)) seen.set(p.propertyId, p);
    }
  }
  return [...seen.values()];
}
