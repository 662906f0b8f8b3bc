/**
 * The yaml package's errors span several lines: the reason, "at line L,
 * column C:", then the offending line and a caret. The CLI prints one line
 * per error, and cutting at the first newline left "at line 2, column 8:"
 * with nothing after it. This puts the reason, the position and the line it
 * points at on one line.
 */

const MAX_EXCERPT = 60;

interface YamlErrorShape {
  message: string;
  linePos?: ReadonlyArray<{ line: number; col: number }>;
}

function isYamlError(err: unknown): err is YamlErrorShape {
  return err instanceof Error && err.name === "YAMLParseError";
}

/**
 * Config files may hold a postgres:// URL with its password: an excerpt of
 * such a line must not print it, nor the value of a key that looks secret.
 */
function redact(line: string): string {
  const urls = line.replace(/(\b[a-z][a-z0-9+.-]*:\/\/[^:/\s@]*:)[^@\s]*@/gi, "$1***@");
  const secret = /^(\s*-?\s*[\w.-]*(password|token|secret)[\w.-]*\s*:).*/i.exec(urls);
  return secret ? `${secret[1]} ***` : urls;
}

function excerpt(text: string, lineNo: number): { line: number; text: string } | undefined {
  const lines = text.split(/\r\n|\r|\n/);
  // An error found at the end of the file (an unclosed bracket or quote) points at an empty line: show the one that opened it.
  for (let n = Math.min(lineNo, lines.length); n >= 1; n--) {
    const content = (lines[n - 1] ?? "").trim();
    if (content === "") continue;
    const shown = redact(content);
    return {
      line: n,
      text: shown.length > MAX_EXCERPT ? `${shown.slice(0, MAX_EXCERPT - 1)}…` : shown,
    };
  }
  return undefined;
}

/**
 * One line for a YAML syntax error in `text`, without the file's name:
 * `not valid YAML at line 2, column 7: Nested mappings are not allowed in
 * compact mappings (line 2: "name: a: b")`.
 *
 * @example
 * try { parse(text) } catch (err) { throw new ConfigError(`${file}: ${describeYamlError(err, text)}`) }
 */
export function describeYamlError(err: unknown, text: string): string {
  if (!isYamlError(err)) {
    const first = err instanceof Error ? (err.message.split("\n")[0] ?? "") : String(err);
    return `not valid YAML: ${first}`;
  }
  const reason = (err.message.split("\n")[0] ?? "").replace(/ at line \d+, column \d+:?\s*$/, "").trim();
  const pos = err.linePos?.[0];
  if (!pos) return `not valid YAML: ${reason}`;
  const near = excerpt(text, pos.line);
  const shown = near ? ` (line ${near.line}: ${JSON.stringify(near.text)})` : "";
  return `not valid YAML at line ${pos.line}, column ${pos.col}: ${reason}${shown}`;
}
