/** Lower case without accents or other marks: "Société" → "societe", "Perú" → "peru". */
export function foldAccents(s: string): string {
  return s.normalize("NFKD").replace(/\p{M}/gu, "").toLowerCase();
}
