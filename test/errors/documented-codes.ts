/** Where a doc's `## Heading` section starts, and where the next one does (or the end). */
function sectionBounds(lines: readonly string[], heading: string): [number, number] | undefined {
  const start = lines.findIndex((l) => l.trim() === `## ${heading}`);
  if (start < 0) return undefined;
  const next = lines.findIndex((l, i) => i > start && l.startsWith("## "));
  return [start, next < 0 ? lines.length : next];
}

/**
 * Every `code` in the first column of a markdown document's tables (a cell
 * may list several): of the section `only` when given, without the section
 * `except` when given. A section named that is not there throws, so that a
 * renamed heading cannot make a test pass on nothing.
 */
export function documentedCodes(
  text: string,
  sections: { only?: string; except?: string } = {},
): Set<string> {
  let lines = text.split("\n");
  const name = sections.only ?? sections.except;
  if (name !== undefined) {
    const bounds = sectionBounds(lines, name);
    if (bounds === undefined) throw new Error(`no section "## ${name}"`);
    const [start, end] = bounds;
    lines =
      sections.only !== undefined ? lines.slice(start, end) : [...lines.slice(0, start), ...lines.slice(end)];
  }
  const codes = new Set<string>();
  for (const line of lines) {
    const first = /^\|([^|]*)\|/.exec(line)?.[1];
    if (!first) continue;
    for (const m of first.matchAll(/`([a-z][a-z_]*)`/g)) if (m[1]) codes.add(m[1]);
  }
  return codes;
}
