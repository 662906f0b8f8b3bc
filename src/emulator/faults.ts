import { z } from "zod";
import { OPERATION_IDS } from "../api/index.ts";
import { createPrng, type Prng } from "./prng.ts";

const rate = z.number().min(0).max(1);

/** Latency: a fixed number of milliseconds, or a range drawn from uniformly. */
export const LatencySpec = z.union([
  z.number().min(0),
  z.tuple([z.number().min(0), z.number().min(0)]),
  z.object({ min: z.number().min(0), max: z.number().min(0) }).strict(),
]);

/** Other names a caller may reach for; mapped onto the canonical keys before checking. */
const KEY_ALIASES: Record<string, string> = {
  operationId: "route",
  latency: "latencyMs",
  slowBody: "slowBodyMs",
  error500Rate: "errorRate",
  serverErrorRate: "errorRate",
  rate429: "tooManyRequestsRate",
  dropConnectionRate: "dropRate",
};
function canonicalKeys(input: unknown): unknown {
  if (typeof input !== "object" || input === null || Array.isArray(input)) return input;
  return Object.fromEntries(Object.entries(input).map(([k, v]) => [KEY_ALIASES[k] ?? k, v]));
}

/** One fault rule as given at start or through POST /__emulator/faults. */
const FaultRuleObject = z
  .object({
    /** An operationId of the endpoint table, or "*" for every route. */
    route: z
      .string()
      .refine((r) => r === "*" || (OPERATION_IDS as string[]).includes(r), {
        message: `route must be "*" or one of ${OPERATION_IDS.join(", ")}`,
      })
      .default("*"),
    /** Share of requests answered 500 Internal Server Error. */
    errorRate: rate.optional(),
    /** Share of requests answered 429 regardless of the quota. */
    tooManyRequestsRate: rate.optional(),
    /** Answer every request 429 for this many seconds from when the rule is set. */
    stormSeconds: z.number().positive().optional(),
    /** Share of requests whose connection is destroyed without an answer. */
    dropRate: rate.optional(),
    latencyMs: LatencySpec.optional(),
    /** Trickle the response body out over this many milliseconds. */
    slowBodyMs: z.number().min(0).optional(),
    /**
     * Share of an import's people accepted, counted in the answer, and never
     * stored (importParticipants only). Which people is fixed by the seed and
     * each person's identifier (see `dropsPerson`), not by the order of requests.
     */
    dropPeopleRate: rate.optional(),
    /** Add this to the `count` of an import's answer, so it no longer matches the people sent (importParticipants only). */
    countOffset: z.number().int().optional(),
    /** Apply to the next N matching requests only, then retire. */
    count: z.number().int().positive().optional(),
  })
  .strict();
export const FaultRule = z.preprocess(canonicalKeys, FaultRuleObject);
export type FaultRuleInput = z.input<typeof FaultRuleObject>;
export type FaultRule = z.infer<typeof FaultRule>;

/** POST /__emulator/faults: one rule, a list, or `{faults:[…]}`; `replace` (default true) drops the old rules. */
export const FaultsBody = z.union([
  z.array(FaultRule),
  z.object({ faults: z.array(FaultRule), replace: z.boolean().default(true) }).strict(),
  FaultRule,
]);

export interface FaultDecision {
  drop: boolean;
  status: 500 | 429 | undefined;
  latencyMs: number;
  slowBodyMs: number;
  /** Share of an import's people silently left out (0: none). */
  dropPeopleRate: number;
  /** Added to an import answer's `count`. */
  countOffset: number;
}

/** One person an import accepted and did not keep: its identifier value as sent. */
export interface DroppedPerson {
  studyId: string;
  importId: string;
  identifier: string;
  key: string;
}

interface ActiveRule {
  rule: FaultRule;
  stormUntil: number | undefined;
  remaining: number | undefined;
}

const NONE: FaultDecision = {
  drop: false,
  status: undefined,
  latencyMs: 0,
  slowBodyMs: 0,
  dropPeopleRate: 0,
  countOffset: 0,
};

/** The faults in force; draws come from a seeded PRNG so a faulty run can be replayed. */
export class FaultInjector {
  #rules: ActiveRule[] = [];
  #prng: Prng;
  /** Fixes which people `dropPeopleRate` leaves out. */
  readonly seed: number;
  /** The people imports have silently left out, in the order they were left out. */
  readonly droppedPeople: DroppedPerson[] = [];

  constructor(seed: number, rules: readonly FaultRule[] = []) {
    this.seed = seed;
    this.#prng = createPrng(seed ^ 0x5eed);
    this.set(rules, true);
  }

  set(rules: readonly FaultRule[], replace: boolean, now: number = Date.now()): void {
    const added = rules.map((rule) => ({
      rule,
      stormUntil: rule.stormSeconds === undefined ? undefined : now + rule.stormSeconds * 1000,
      remaining: rule.count,
    }));
    this.#rules = replace ? added : [...this.#rules, ...added];
  }

  /** Forgets who was dropped (a reset of the emulator). */
  clearDropped(): void {
    this.droppedPeople.length = 0;
  }

  list(): (FaultRule & { stormUntil?: string })[] {
    return this.#rules.map((a) => ({
      ...a.rule,
      ...(a.stormUntil === undefined ? {} : { stormUntil: new Date(a.stormUntil).toISOString() }),
      ...(a.remaining === undefined ? {} : { count: a.remaining }),
    }));
  }

  get active(): boolean {
    return this.#rules.length > 0;
  }

  decide(operationId: string, now: number = Date.now()): FaultDecision {
    if (this.#rules.length === 0) return NONE;
    const d: FaultDecision = { ...NONE };
    for (const a of this.#rules) {
      const r = a.rule;
      if (r.route !== "*" && r.route !== operationId) continue;
      if (a.remaining !== undefined) a.remaining--;
      if (r.latencyMs !== undefined) d.latencyMs = Math.max(d.latencyMs, this.#latency(r.latencyMs));
      if (r.slowBodyMs !== undefined) d.slowBodyMs = Math.max(d.slowBodyMs, r.slowBodyMs);
      if (r.dropRate !== undefined && this.#prng.chance(r.dropRate)) d.drop = true;
      if (r.dropPeopleRate !== undefined) d.dropPeopleRate = Math.max(d.dropPeopleRate, r.dropPeopleRate);
      if (r.countOffset !== undefined) d.countOffset += r.countOffset;
      if (d.status === undefined && a.stormUntil !== undefined && now < a.stormUntil) d.status = 429;
      if (
        d.status === undefined &&
        r.tooManyRequestsRate !== undefined &&
        this.#prng.chance(r.tooManyRequestsRate)
      )
        d.status = 429;
      if (d.status === undefined && r.errorRate !== undefined && this.#prng.chance(r.errorRate))
        d.status = 500;
    }
    this.#rules = this.#rules.filter(
      (a) =>
        (a.remaining === undefined || a.remaining > 0) &&
        !(a.stormUntil !== undefined && now >= a.stormUntil && onlyStorm(a.rule)),
    );
    return d;
  }

  #latency(spec: z.infer<typeof LatencySpec>): number {
    if (typeof spec === "number") return spec;
    const [min, max] = Array.isArray(spec) ? spec : [spec.min, spec.max];
    return Math.round(min + this.#prng.next() * Math.max(0, max - min));
  }
}

function onlyStorm(r: FaultRule): boolean {
  return (
    r.errorRate === undefined &&
    r.tooManyRequestsRate === undefined &&
    r.dropRate === undefined &&
    r.latencyMs === undefined &&
    r.slowBodyMs === undefined &&
    r.dropPeopleRate === undefined &&
    r.countOffset === undefined
  );
}

/** Parses `--latency 50` or `--latency 20-200`. */
export function parseLatency(text: string): z.infer<typeof LatencySpec> | undefined {
  const m = /^\s*(\d+)\s*(?:-\s*(\d+))?\s*(?:ms)?\s*$/.exec(text);
  if (!m) return undefined;
  return m[2] === undefined ? Number(m[1]) : [Number(m[1]), Number(m[2])];
}
