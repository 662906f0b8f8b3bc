import type { RowProblem } from "../row-problem.ts";
import type { PopulationPlan } from "./column-plan.ts";

/**
 * Step 4, resolve the population: the plan's fixed one (null for none), or
 * the row's value of the population column looked up in
 * `target.population.values` (trimmed, any case), else the default;
 * undefined when the value is not listed and there is no default.
 */
export function resolvePopulation(pop: PopulationPlan, cells: readonly string[]): string | null | undefined {
  if (pop.index === undefined || !pop.values) return pop.fixed;
  const id = pop.values.get((cells[pop.index] ?? "").trim().toLowerCase());
  if (id !== undefined) return id;
  return pop.fallback;
}

/** The issue of a row whose population resolvePopulation could not find. */
export function unknownPopulation(pop: PopulationPlan, headers: readonly string[], row: number): RowProblem {
  return {
    code: "unknown_population",
    path: ["population"],
    message: `${headers[pop.index ?? -1]}: value not listed in target.population.values and no default`,
    row,
  };
}
