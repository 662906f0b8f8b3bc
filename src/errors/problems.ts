import { z } from "zod";

/**
 * One thing wrong with an input: where (a dotted path into it, e.g.
 * `columns.2.transforms.0`; the caller's `root` for the whole) and what.
 * Config files, job definitions, job data and the ops API's bodies all say
 * what is wrong with them as a list of these (a row of a CSV says it as a
 * RowProblem, src/imports/row-problem.ts, with its code and row).
 */
export const Problem = z.object({ path: z.string(), message: z.string() });
export type Problem = z.infer<typeof Problem>;

type Issue = z.core.$ZodIssue;

export interface ProblemsOptions {
  /** What the path of an issue about the whole input reads as, e.g. "(body)"; default "". */
  root?: string;
  /** A clearer message for some issues (return undefined to keep zod's). */
  message?: (issue: Issue) => string | undefined;
}

/** A union's own message says nothing; the branch that got furthest says what was meant. */
function furthestBranch(issue: Issue & { code: "invalid_union" }): Issue[] {
  const score = (branch: Issue[]) => [
    Math.max(0, ...branch.map((i) => i.path.length)),
    -branch.length,
    -branch.filter((i) => i.code === "invalid_type" && i.path.length === 0).length,
  ];
  let best = issue.errors[0] as Issue[];
  for (const branch of issue.errors.slice(1)) {
    const a = score(branch);
    const b = score(best);
    for (let k = 0; k < a.length; k++) {
      if ((a[k] ?? 0) > (b[k] ?? 0)) {
        best = branch;
        break;
      }
      if ((a[k] ?? 0) < (b[k] ?? 0)) break;
    }
  }
  return best;
}

function flatten(issue: Issue, base: PropertyKey[], options: ProblemsOptions): Problem[] {
  const at = [...base, ...issue.path];
  if (issue.code === "invalid_union" && issue.errors.length > 0) {
    return furthestBranch(issue).flatMap((i) => flatten(i, at, options));
  }
  const path = at.map((k) => String(k)).join(".") || (options.root ?? "");
  return [{ path, message: options.message?.(issue) ?? issue.message }];
}

/**
 * Every issue of a zod error as a Problem, each with its path, so an input
 * says at once all that is wrong with it.
 *
 * @example
 * const parsed = Schema.safeParse(body);
 * if (!parsed.success) throw new ConfigError(describeProblems(problemsOf(parsed.error)));
 */
export function problemsOf(error: z.ZodError, options: ProblemsOptions = {}): Problem[] {
  return error.issues.flatMap((i) => flatten(i, [], options));
}

/** `path: message; path: message` — problems as one line. */
export function describeProblems(problems: readonly Problem[]): string {
  return problems.map((p) => (p.path ? `${p.path}: ${p.message}` : p.message)).join("; ");
}
