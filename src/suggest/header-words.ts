/**
 * How CRMs, spreadsheets and form tools name the columns of a person, in
 * English, German, French and Spanish. Phrases are written as headerKey()
 * makes them: lower case, accents dropped, "e-mail" as "email", words
 * separated by one space.
 */

export type Language = "en" | "de" | "fr" | "es";

/** A column's kind before the fields are handed out: a second email column becomes additionalEmails. */
export type HeaderKind =
  | "email"
  | "email-other"
  | "phone"
  | "phone-other"
  | "firstName"
  | "lastName"
  | "lastContactDate"
  | "optedOut"
  | "consent"
  | "subscription";

/** Headers that mean a kind when they are the whole header. */
export const EXACT_HEADERS: Record<HeaderKind, Partial<Record<Language, readonly string[]>>> = {
  email: {
    en: ["email", "email address", "emailaddress", "mail", "primary email", "email 1", "contact email"],
    de: ["email adresse", "emailadresse", "mailadresse", "mail adresse"],
    fr: ["courriel", "adresse email", "adresse electronique", "adresse mail", "mel", "adresse courriel"],
    es: [
      "correo",
      "correo electronico",
      "direccion de correo electronico",
      "direccion de correo",
      "correo e",
    ],
  },
  "email-other": {
    en: [
      "secondary email",
      "other email",
      "alternate email",
      "alternative email",
      "additional email",
      "additional emails",
      "additional email addresses",
      "email 2",
      "email 3",
      "email 2 address",
      "email 3 address",
      "second email",
    ],
    de: ["weitere email", "zweite email", "weitere email adresse", "email adresse 2"],
    fr: ["autre email", "email secondaire", "adresse email 2", "autre adresse email", "courriel 2"],
    es: ["correo secundario", "otro correo", "correo alternativo", "correo electronico 2"],
  },
  phone: {
    en: [
      "phone",
      "phone number",
      "telephone",
      "telephone number",
      "tel",
      "business phone",
      "work phone",
      "office phone",
      "contact number",
      "phone 1",
    ],
    de: ["telefon", "telefonnummer", "rufnummer", "telefon geschaftlich", "tel nr"],
    fr: ["numero de telephone", "tel", "telephone fixe", "telephone professionnel"],
    es: ["telefono", "numero de telefono", "telefono fijo"],
  },
  "phone-other": {
    en: [
      "mobile",
      "mobile phone",
      "mobile phone number",
      "mobile number",
      "cell",
      "cell phone",
      "cellphone",
      "home phone",
      "other phone",
      "phone 2",
      "phone 3",
    ],
    de: ["handy", "mobil", "mobilnummer", "mobiltelefon", "handynummer", "telefon privat", "telefon mobil"],
    fr: ["portable", "mobile", "telephone portable", "telephone mobile", "numero de portable"],
    es: ["movil", "celular", "telefono movil", "telefono celular", "numero de movil"],
  },
  firstName: {
    en: ["first name", "firstname", "first", "given name", "givenname", "forename", "fname", "name first"],
    de: ["vorname", "rufname"],
    fr: ["prenom", "prenoms"],
    es: ["nombre de pila", "primer nombre"],
  },
  lastName: {
    en: ["last name", "lastname", "last", "surname", "family name", "familyname", "lname", "name last"],
    de: ["nachname", "familienname"],
    fr: ["nom de famille", "nom de naissance"],
    es: ["apellido", "apellidos", "primer apellido"],
  },
  lastContactDate: {
    en: [
      "last contacted",
      "last contact",
      "last contact date",
      "last contacted date",
      "date last contacted",
      "last activity",
      "last activity date",
    ],
    de: ["letzter kontakt", "datum letzter kontakt", "letzte aktivitat", "zuletzt kontaktiert"],
    fr: ["dernier contact", "date du dernier contact", "date de dernier contact", "derniere activite"],
    es: ["ultimo contacto", "fecha del ultimo contacto", "fecha de ultimo contacto", "ultima actividad"],
  },
  optedOut: {
    en: [
      "opted out",
      "opt out",
      "optout",
      "is opted out",
      "email opt out",
      "has opted out of email",
      "unsubscribed",
      "unsubscribed from all email",
      "do not contact",
      "do not email",
      "research opt out",
    ],
    de: ["abgemeldet", "abmeldung", "werbewiderspruch", "kein kontakt", "nicht kontaktieren"],
    fr: ["desinscrit", "desabonne", "desinscription", "ne pas contacter", "opposition"],
    es: ["dado de baja", "baja", "no contactar", "darse de baja"],
  },
  consent: {
    en: [
      "consent",
      "research consent",
      "marketing consent",
      "email marketing consent",
      "opted in",
      "opt in",
      "newsletter",
      "accepts marketing",
      "accepts email marketing",
      "email marketing",
      "marketing opt in",
      "subscribed to newsletter",
    ],
    de: [
      "einwilligung",
      "einverstandnis",
      "werbeeinwilligung",
      "newsletter einwilligung",
      "einwilligung newsletter",
      "newsletter abonniert",
    ],
    fr: ["consentement", "accepte les emails", "abonne newsletter", "inscrit newsletter"],
    es: ["consentimiento", "acepta marketing", "acepta publicidad", "acepta comunicaciones", "suscrito"],
  },
  subscription: {
    en: [
      "email subscriber status",
      "subscriber status",
      "subscription status",
      "email subscription status",
      "email marketing status",
      "marketing contact status",
      "marketing status",
      "newsletter status",
    ],
    de: ["abonnementstatus", "newsletter status", "status newsletter", "anmeldestatus"],
    fr: ["statut d abonnement", "statut abonnement", "statut newsletter"],
    es: ["estado de suscripcion", "estado suscripcion", "estado newsletter"],
  },
};

/**
 * Phrases that name a kind anywhere in a longer header ("What's your email
 * address?", "Person - Email - Work", "E-mail 2 - Value"). The kind given
 * first is the one of a plain column; a header that also holds an OTHER word
 * is the other kind.
 */
export const CONTAINED_PHRASES: readonly { phrase: string; kind: HeaderKind }[] = [
  { phrase: "email", kind: "email" },
  { phrase: "courriel", kind: "email" },
  { phrase: "correo", kind: "email" },
  { phrase: "phone", kind: "phone" },
  { phrase: "telephone", kind: "phone" },
  { phrase: "telefon", kind: "phone" },
  { phrase: "telefono", kind: "phone" },
  { phrase: "mobile", kind: "phone-other" },
  { phrase: "cell", kind: "phone-other" },
  { phrase: "handy", kind: "phone-other" },
  { phrase: "portable", kind: "phone-other" },
  { phrase: "movil", kind: "phone-other" },
  { phrase: "first name", kind: "firstName" },
  { phrase: "given name", kind: "firstName" },
  { phrase: "vorname", kind: "firstName" },
  { phrase: "prenom", kind: "firstName" },
  { phrase: "last name", kind: "lastName" },
  { phrase: "surname", kind: "lastName" },
  { phrase: "family name", kind: "lastName" },
  { phrase: "nachname", kind: "lastName" },
  { phrase: "nom de famille", kind: "lastName" },
  { phrase: "apellido", kind: "lastName" },
  { phrase: "apellidos", kind: "lastName" },
];

/**
 * Phrases that make a longer header a consent or opt-out column ("Email
 * Opt-In", "Exclude_from_Email_SMS", "Newsletter opt out"), whatever else it
 * names: the email or phone such a header names is what the consent is
 * about, not an address.
 */
export const CONSENT_PHRASES: readonly { phrase: string; kind: "optedOut" | "consent" }[] = [
  { phrase: "opt out", kind: "optedOut" },
  { phrase: "optout", kind: "optedOut" },
  { phrase: "opted out", kind: "optedOut" },
  { phrase: "unsubscribed", kind: "optedOut" },
  { phrase: "exclude from", kind: "optedOut" },
  { phrase: "excluded from", kind: "optedOut" },
  { phrase: "do not email", kind: "optedOut" },
  { phrase: "do not contact", kind: "optedOut" },
  { phrase: "opt in", kind: "consent" },
  { phrase: "optin", kind: "consent" },
  { phrase: "opted in", kind: "consent" },
];

/** Words that make a consent phrase's header about something else: when, where from, why (Mailchimp's OPTIN_TIME). */
export const CONSENT_VETO_WORDS: ReadonlySet<string> = new Set([
  "time",
  "date",
  "datum",
  "fecha",
  "ip",
  "source",
  "campaign",
  "reason",
  "method",
  "by",
  "id",
  "count",
]);

/** Words that make an email or phone column a second one: "Email 2", "Home Phone", "Other Email". */
export const OTHER_WORDS: ReadonlySet<string> = new Set([
  "2",
  "3",
  "4",
  "other",
  "home",
  "secondary",
  "alternate",
  "alternative",
  "additional",
  "private",
  "personal",
  "privat",
  "weitere",
  "zweite",
  "autre",
  "secondaire",
  "otro",
  "secundario",
  "alternativo",
  "mobile",
  "cell",
]);

/**
 * Words of a longer header that say its email, phone or name is not the
 * person's own, or is something about it rather than it ("Contact owner
 * email", "Email Opt Out", "Phone 1 - Type", "Email verified").
 */
export const VETO_WORDS: ReadonlySet<string> = new Set([
  "owner",
  "company",
  "organization",
  "organisation",
  "account",
  "manager",
  "assistant",
  "emergency",
  "referrer",
  "referred",
  "sales",
  "rep",
  "agent",
  "user",
  "created",
  "modified",
  "by",
  "type",
  "label",
  "verified",
  "valid",
  "validation",
  "bounced",
  "bounce",
  "opt",
  "optin",
  "optout",
  "opted",
  "consent",
  "status",
  "date",
  "time",
  "ip",
  "id",
  "count",
  "domain",
  "source",
  "rating",
  "fax",
  "ext",
  "extension",
  "subscribed",
  "unsubscribed",
  "country",
  "code",
  "firma",
  "unternehmen",
  "societe",
  "entreprise",
  "empresa",
]);

/** Words of a header that name the organisation a person works for (`Company Name`, `Associated Company`). */
export const ORGANISATION_WORDS: ReadonlySet<string> = new Set([
  "company",
  "organization",
  "organisation",
  "org",
  "account",
  "firma",
  "unternehmen",
  "societe",
  "entreprise",
  "empresa",
  "compania",
  "employer",
  "arbeitgeber",
]);

/**
 * Headers that name what is not a person field: the organisation, its
 * people, notes, tags and the CRM's own bookkeeping. Such a column is never
 * given a person field, whatever its values look like (an owner's emails are
 * not the contact's); it may still match a workspace property by name.
 */
export const NOT_PERSON_WORDS: ReadonlySet<string> = new Set([
  // the organisation
  ...ORGANISATION_WORDS,
  "website",
  "domain",
  "industry",
  "branche",
  "secteur",
  "sector",
  // notes, tags, lists
  "notes",
  "note",
  "comments",
  "comment",
  "notizen",
  "notiz",
  "bemerkung",
  "bemerkungen",
  "kommentar",
  "anmerkungen",
  "remarques",
  "commentaires",
  "commentaire",
  "notas",
  "nota",
  "observaciones",
  "comentarios",
  "tags",
  "tag",
  "labels",
  "label",
  "etiquetas",
  "etiquettes",
  "schlagworte",
  "categories",
  "category",
  "groups",
  "group",
  "segment",
  "lists",
  // the CRM's bookkeeping
  "owner",
  "status",
  "stage",
  "lifecycle",
  "source",
  "lead",
  "deal",
  "score",
  "rating",
  "id",
  "uuid",
  "created",
  "modified",
  "updated",
  "timestamp",
  "ip",
  // someone else: an emergency contact's phone is not the person's
  "emergency",
  "notfall",
  "notfallkontakt",
  "urgence",
  "emergencia",
  // about the person but no person field
  "title",
  "position",
  "fonction",
  "cargo",
  "puesto",
  "salutation",
  "anrede",
  "civilite",
  "tratamiento",
  "address",
  "street",
  "strasse",
  "city",
  "ort",
  "stadt",
  "ville",
  "ciudad",
  "zip",
  "postal",
  "plz",
  "postleitzahl",
  "country",
  "land",
  "pays",
  "pais",
  "region",
  "state",
  "fax",
]);

/** A whole header that is one person's full name: the service keeps first and last names apart. */
export const FULL_NAME_HEADERS: ReadonlySet<string> = new Set([
  "name",
  "full name",
  "fullname",
  "contact name",
  "your name",
  "what is your name",
  "what s your name",
  "person name",
  "vollstandiger name",
  "nom",
  "nom complet",
  "nombre",
  "nombre completo",
  "display name",
  "vor und nachname",
  "vorname und nachname",
  "vorname nachname",
  "nachname vorname",
  "name vorname",
  "nom et prenom",
  "nom prenom",
  "prenom et nom",
  "prenom nom",
  "nombre y apellidos",
  "nombre y apellido",
  "nombre apellidos",
  "apellidos y nombre",
  "apellidos nombre",
]);

/**
 * A full-name header that, beside a first-name column, is the last name: a
 * German "Vorname, Name", a French "Prénom, Nom".
 */
export const SURNAME_BESIDE_FIRST: ReadonlySet<string> = new Set(["name", "nom"]);
/** And beside a last-name column, the first name: a Spanish "Nombre, Apellidos". */
export const FIRST_NAME_BESIDE_LAST: ReadonlySet<string> = new Set(["nombre"]);

/** Yes/no words beyond the boolean transform's defaults (ja/nein, oui/non, sí/no, x). */
export const TRUE_WORDS = [
  "yes",
  "y",
  "true",
  "t",
  "1",
  "x",
  "ja",
  "j",
  "oui",
  "o",
  "si",
  "sí",
  "vrai",
  "wahr",
];
export const FALSE_WORDS = ["no", "n", "false", "f", "0", "nein", "non", "faux", "falsch", "falso"];

/**
 * Values of a subscription or consent column that say the person is opted
 * out, in the languages above, as exports write them (matched trimmed,
 * ignoring case; accented and plain forms both, since the boolean transform
 * compares them as written).
 */
export const OPT_OUT_WORDS = [
  "unsubscribed",
  "opted out",
  "opted-out",
  "opt-out",
  "opt out",
  "optout",
  "abgemeldet",
  "abbestellt",
  "ausgetragen",
  "widerrufen",
  "désinscrit",
  "desinscrit",
  "désabonné",
  "desabonne",
  "dado de baja",
  "dada de baja",
  "de baja",
  "baja",
];
/** Values that say the person is subscribed: never read as opted out. */
export const SUBSCRIBED_WORDS = [
  "subscribed",
  "opted in",
  "opted-in",
  "opt-in",
  "optin",
  "angemeldet",
  "abonniert",
  "eingetragen",
  "inscrit",
  "abonné",
  "abonne",
  "suscrito",
  "suscrita",
  "de alta",
  "alta",
];
/**
 * Values of a subscription column that say nothing about consent: an address
 * that bounced (Mailchimp's cleaned), a confirmation not yet given, a
 * HubSpot billing class, Pipedrive's "No consent" (never asked, not
 * unsubscribed). In neither list, so the import reports them.
 */
export const NEUTRAL_STATUS_WORDS = [
  "cleaned",
  "pending",
  "transactional",
  "archived",
  "never subscribed",
  "not set",
  "non-subscribed",
  "bounced",
  "no consent",
  "marketing contact",
  "non-marketing contact",
  "unknown",
];

/** Header words of a country column: Shopify's Country Code, Mailchimp's CC, Salesforce's Mailing Country. */
export const COUNTRY_HEADER_WORDS: ReadonlySet<string> = new Set([
  "country",
  "land",
  "lander",
  "landercode",
  "pays",
  "pais",
  "nation",
]);
/** Whole headers that are a country column. */
export const COUNTRY_HEADERS: ReadonlySet<string> = new Set(["cc", "country code", "iso country"]);

/** The country a header language most likely means for phone numbers (English says none alone). */
export const LANGUAGE_COUNTRY: Partial<Record<Language, string>> = { de: "DE", fr: "FR", es: "ES" };
