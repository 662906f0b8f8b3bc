/** Commander's parser of an option given again and again: every value, in order (`--study a --study b`). */
export function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}
