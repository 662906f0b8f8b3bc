import { getHeapStatistics } from "node:v8";
import { SeedSizes, type SeedSizesInput } from "./seed.ts";

/**
 * V8 heap bytes one seeded record keeps after a full GC, rounded up. Measured
 * on Node 20 by seeding one kind at a time in a fresh process (`--expose-gc`,
 * heapUsed after `gc()` minus before): a person ~720 B (1,000,000 people:
 * 686 MB), a participant ~430 B, a study with its screener ~1.5 KB, an
 * incentive ~350 B, an email message ~330 B, a property ~300 B, a segment
 * ~160 B. Rounding up leaves room for the garbage seeding makes on the way.
 */
const BYTES_PER = {
  person: 800,
  participant: 480,
  study: 2000,
  incentive: 400,
  customIncentive: 1000,
  emailMessage: 400,
  property: 400,
  segment: 200,
  population: 200,
  team: 200,
  user: 400,
} as const;

/** The share of V8's heap limit a seed may fill; the rest is for serving, snapshots and garbage. */
export const SEED_HEAP_SHARE = 0.7;

/** What a seed of these sizes would hold in the V8 heap, in bytes (an estimate, see BYTES_PER). */
export function estimateSeedBytes(input: SeedSizesInput): number {
  const s = SeedSizes.parse(input);
  // A person joins a study once, so a study holds at most every person.
  const participants = s.studies * Math.min(s.participantsPerStudy, s.people);
  return (
    s.people * BYTES_PER.person +
    participants * BYTES_PER.participant +
    s.studies * BYTES_PER.study +
    s.incentives * BYTES_PER.incentive +
    s.customIncentives * BYTES_PER.customIncentive +
    // Messages go to participants; with none, none are seeded.
    (participants === 0 ? 0 : s.emailMessages * BYTES_PER.emailMessage) +
    s.properties * BYTES_PER.property +
    s.segments * BYTES_PER.segment +
    s.populations * BYTES_PER.population +
    s.teams * BYTES_PER.team +
    s.users * BYTES_PER.user
  );
}

/** How many bytes a seed may take: `maxSeedMemoryMb` when configured, else a share of V8's heap limit. */
export function seedBudgetBytes(maxSeedMemoryMb?: number): number {
  if (maxSeedMemoryMb !== undefined) return maxSeedMemoryMb * 2 ** 20;
  return Math.floor(getHeapStatistics().heap_size_limit * SEED_HEAP_SHARE);
}

function size(bytes: number): string {
  const [unit, factor] =
    bytes >= 2 ** 40 ? ["TB", 2 ** 40] : bytes >= 10 * 2 ** 30 ? ["GB", 2 ** 30] : ["MB", 2 ** 20];
  return `${Math.ceil(bytes / factor).toLocaleString("en-US")} ${unit}`;
}

/**
 * Why a seed of these sizes cannot be held, or undefined when it fits. Runs
 * before any record is made, so an impossible seed is refused at once instead
 * of blocking the event loop until the process dies out of memory.
 */
export function seedTooLarge(input: SeedSizesInput, maxSeedMemoryMb?: number): string | undefined {
  const s = SeedSizes.parse(input);
  const need = estimateSeedBytes(s);
  const budget = seedBudgetBytes(maxSeedMemoryMb);
  if (need <= budget) return undefined;
  const participants = s.studies * Math.min(s.participantsPerStudy, s.people);
  const where =
    maxSeedMemoryMb === undefined
      ? `${Math.round(SEED_HEAP_SHARE * 100)}% of this process's heap limit; NODE_OPTIONS=--max-old-space-size=MB raises it`
      : "maxSeedMemoryMb";
  return (
    `a seed of ${s.people.toLocaleString("en-US")} people and ${participants.toLocaleString("en-US")} participants ` +
    `(${s.studies.toLocaleString("en-US")} studies × ${Math.min(s.participantsPerStudy, s.people).toLocaleString("en-US")}) ` +
    `needs about ${size(need)}, more than the ${size(budget)} allowed (${where}): seed fewer`
  );
}
