// 5. Save as job: the mapping on the page written to jobs/<name>.yaml.
import { SavedJob } from "../api-contract.ts";
import { call, Refused, reasonOf } from "./api.ts";
import { field } from "./dom.ts";
import { busy, definition } from "./mapping.ts";
import { clearProblem, showProblem } from "./problem.ts";

export async function save(): Promise<void> {
  clearProblem();
  const name = field("job-name").value.trim();
  if (!name) {
    showProblem("Give the job a name first.", [
      { path: "name", message: "lower-case letters, digits and dashes" },
    ]);
    field("job-name").focus();
    return;
  }
  busy(true, "Saving…");
  try {
    const saved = await call(SavedJob, "POST", "api/jobs", {
      name,
      definition: definition(),
      overwrite: field("overwrite").checked,
    });
    busy(false, `Saved as ${saved.file}${saved.overwritten ? " (replaced the job of that name)" : ""}.`);
  } catch (err) {
    busy(false);
    if (err instanceof Refused && err.code === "ops_job_exists") {
      showProblem(`A job named ${name} exists already: tick "replace a job of that name" to replace it.`);
    } else {
      const { message, problems } = reasonOf(err);
      showProblem(message, problems);
    }
  }
}
