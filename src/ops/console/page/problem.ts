import type { Refused } from "./api.ts";
import { box, el } from "./dom.ts";

/** Says what needs attention at the top of the page, each problem with its path, and takes the focus (a screen reader reads it). */
export function showProblem(message: string, problems: Refused["problems"] = []): void {
  box("problem-message").textContent = message;
  box("problem-list").replaceChildren(
    ...problems.map((p) => el("li", p.path ? `${p.path}: ${p.message}` : p.message)),
  );
  const problem = box("problem");
  problem.hidden = false;
  problem.focus();
}

export function clearProblem(): void {
  box("problem").hidden = true;
}
