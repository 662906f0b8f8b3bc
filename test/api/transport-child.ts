// One request through the node transport, then nothing: the process must end on its own.
import { createNodeTransport } from "../../src/api/transport.ts";

const url = process.argv[2];
if (!url) throw new Error("usage: transport-child.ts URL");
const res = await createNodeTransport()(new URL(url), {
  method: "GET",
  headers: {},
  body: undefined,
  signal: new AbortController().signal,
});
await res.text();
process.stdout.write("answered\n");
