// Types of compiled-cli.mjs for the TypeScript that imports it (bench/, test/).
export declare const ROOT: string;
export declare const SRC: string;
export declare const DIST: string;
export declare const STAMP: string;
export declare const ENTRY: string;
/** Size (or "dir") and modification time of each path the build reads, by path under the repository. */
export declare function sourceFingerprint(): Record<string, [number | "dir", number]>;
/** The same entries for other files the build read, given by path under the repository. */
export declare function filesFingerprint(relativePaths: string[]): Record<string, [number | "dir", number]>;
/** True when dist/ holds a build of exactly the current sources. */
export declare function compiledIsFresh(): boolean;
