/** Emails match case-insensitively: the same mailbox whatever the capitals. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** Phones match on their digits (and a leading +): spaces, dashes, dots and brackets are formatting. */
export function normalizePhone(phone: string): string {
  // Phones usually arrive already as digits with an optional leading + (E.164,
  // what the CLI sends), which normalise to themselves: answering those without
  // the regex replace and two new strings matters when an import indexes
  // hundreds of thousands of them.
  if (isPlainDigits(phone)) return phone;
  const t = phone.trim();
  return (t.startsWith("+") ? "+" : "") + t.replace(/\D/g, "");
}

/** Whether `s` is one or more ASCII digits with an optional leading +. */
function isPlainDigits(s: string): boolean {
  const start = s.charCodeAt(0) === 43 /* + */ ? 1 : 0;
  if (s.length <= start) return false;
  for (let i = start; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}
