// Runs on Node's module hooks thread for loaded-modules.mjs: reports every URL loaded.
let port;

export function initialize(data) {
  port = data.port;
}

export async function load(url, context, nextLoad) {
  port.postMessage(url);
  return nextLoad(url, context);
}
