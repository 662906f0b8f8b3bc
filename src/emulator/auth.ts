import { PERMISSIONS, type Permission } from "../api/index.ts";
import { ConfigError } from "../errors/index.ts";
import { DEFAULT_TOKEN } from "./defaults.ts";

export { DEFAULT_TOKEN };

export interface TokenGrant {
  token: string;
  permissions: ReadonlySet<Permission>;
}

/**
 * Parses `TOKEN[:PERM,PERM…]`. No list means every permission; an empty list
 * (`TOKEN:`) means none, which is how tests get a 403.
 */
export function parseTokenSpec(spec: string): TokenGrant {
  const colon = spec.indexOf(":");
  const token = colon === -1 ? spec : spec.slice(0, colon);
  if (token.trim() === "") throw new ConfigError(`token "${spec}" is empty: use TOKEN[:PERM,PERM…]`);
  if (colon === -1) return { token, permissions: new Set(PERMISSIONS) };
  const list = spec
    .slice(colon + 1)
    .split(",")
    .map((p) => p.trim())
    .filter((p) => p !== "");
  for (const p of list) {
    if (!(PERMISSIONS as readonly string[]).includes(p)) {
      throw new ConfigError(`unknown permission "${p}" in a --token: use any of ${PERMISSIONS.join(", ")}`);
    }
  }
  return { token, permissions: new Set(list as Permission[]) };
}

export type TokenInput = string | { token: string; permissions?: readonly Permission[] };

export class TokenTable {
  readonly #grants = new Map<string, TokenGrant>();

  constructor(inputs: readonly TokenInput[]) {
    const list = inputs.length === 0 ? [DEFAULT_TOKEN] : inputs;
    for (const input of list) {
      const grant =
        typeof input === "string"
          ? parseTokenSpec(input)
          : { token: input.token, permissions: new Set(input.permissions ?? PERMISSIONS) };
      this.#grants.set(grant.token, grant);
    }
  }

  /** The grant of an `Authorization: Bearer …` header, or undefined when missing or unknown. */
  authenticate(header: string | undefined): TokenGrant | undefined {
    if (header === undefined) return undefined;
    const m = /^Bearer\s+(.+)$/i.exec(header.trim());
    if (!m?.[1]) return undefined;
    return this.#grants.get(m[1].trim());
  }

  list(): { token: string; permissions: Permission[] }[] {
    return [...this.#grants.values()].map((g) => ({ token: g.token, permissions: [...g.permissions] }));
  }
}
