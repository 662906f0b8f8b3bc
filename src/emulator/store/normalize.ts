/** Emails match case-insensitively: the same mailbox whatever the capitals. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** Phones match on their digits (and a leading +): spaces, dashes, dots and brackets are formatting. */
export function normalizePhone(phone: string): string {
  const t = phone.trim();
  return (t.startsWith("+") ? "+" : "") + t.replace(/\D/g, "");
}
