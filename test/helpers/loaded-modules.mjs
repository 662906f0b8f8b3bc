// Preload (`node --import ./test/helpers/loaded-modules.mjs …`) that writes,
// when the process exits, every module file it loaded to the file named by
// LOADED_MODULES_FILE, one path a line. ES modules are seen by a load hook on
// Node's hooks thread; CommonJS files required from inside packages never pass
// that hook in Node 20, so the CommonJS cache is read as well.

import { writeFileSync } from "node:fs";
import { createRequire, register } from "node:module";
import { fileURLToPath } from "node:url";
import { MessageChannel, receiveMessageOnPort } from "node:worker_threads";

const out = process.env.LOADED_MODULES_FILE;
if (out) {
  const { port1, port2 } = new MessageChannel();
  port1.unref();
  register("./loaded-modules-hooks.mjs", import.meta.url, { data: { port: port2 }, transferList: [port2] });
  const esm = new Set();
  // Messages are read synchronously at exit: an exit handler cannot wait for the event loop.
  process.on("exit", () => {
    for (let m = receiveMessageOnPort(port1); m; m = receiveMessageOnPort(port1)) esm.add(m.message);
    const files = new Set(Object.keys(createRequire(import.meta.url).cache));
    for (const url of esm) if (url.startsWith("file:")) files.add(fileURLToPath(url));
    writeFileSync(out, `${[...files].sort().join("\n")}\n`);
  });
}
