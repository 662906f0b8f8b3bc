// Types of cli-bundle.mjs for the TypeScript that imports it (test/).
/** Packages compiled into the CLI bundle; every other package stays an import of node_modules. */
export declare const BUNDLED_PACKAGES: readonly string[];
