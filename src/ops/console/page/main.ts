// The console's page (docs/console.md): plain DOM, no framework. Bundled for
// the browser by esbuild (page-bundle.ts) with what it takes from src/: the
// contract's person fields, the job words, the API's answer schemas.
import { box, button, field } from "./dom.ts";
import { uploadFile } from "./mapping.ts";
import { preview } from "./preview.ts";
import { refreshQueues, setQueueHeads } from "./queues.ts";
import { run, uploadCorrected } from "./run.ts";
import { save } from "./save.ts";

/** A file box: its input's choice, or a file dropped on it. */
function fileBox(boxId: string, inputId: string, onFile: (file: File) => Promise<void>): void {
  const input = field(inputId);
  input.addEventListener("change", () => {
    const file = input.files?.[0];
    if (file) void onFile(file);
  });
  const drop = box(boxId);
  drop.addEventListener("dragover", (e) => {
    e.preventDefault();
    drop.classList.add("over");
  });
  drop.addEventListener("dragleave", () => drop.classList.remove("over"));
  drop.addEventListener("drop", (e) => {
    e.preventDefault();
    drop.classList.remove("over");
    const file = e.dataTransfer?.files[0];
    if (file) void onFile(file);
  });
}

fileBox("drop", "file", uploadFile);
fileBox("rejects-drop", "rejects-file", uploadCorrected);
button("preview-button").addEventListener("click", () => void preview());
button("dry-run-button").addEventListener("click", () => void run(true));
button("run-button").addEventListener("click", () => void run(false));
button("save-button").addEventListener("click", () => void save());
setQueueHeads();
void refreshQueues();
