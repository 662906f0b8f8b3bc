import type { QuestionRequest } from "../api/index.ts";

/** Word pools of the seeded workspace; small and fixed so a seed gives the same store everywhere. */
export const FIRST_NAMES = [
  "Ada",
  "Ben",
  "Chloe",
  "Dev",
  "Elif",
  "Femi",
  "Grace",
  "Hugo",
  "Ines",
  "Jonas",
  "Kira",
  "Liam",
  "Maya",
  "Nico",
  "Olga",
  "Priya",
  "Quinn",
  "Rosa",
  "Sami",
  "Tara",
  "Umar",
  "Vera",
  "Wen",
  "Yusuf",
  "Zoe",
] as const;
export const LAST_NAMES = [
  "Abbott",
  "Baker",
  "Costa",
  "Diaz",
  "Eriksen",
  "Fischer",
  "Garcia",
  "Haddad",
  "Ito",
  "Jensen",
  "Kowalski",
  "Larsen",
  "Moreau",
  "Nakamura",
  "Okafor",
  "Patel",
  "Quist",
  "Rossi",
  "Silva",
  "Tanaka",
  "Usman",
  "Varga",
  "Weber",
  "Xu",
  "Young",
] as const;
export const COUNTRIES = [
  "United States",
  "Canada",
  "United Kingdom",
  "Germany",
  "Brazil",
  "India",
  "Japan",
] as const;
export const JOB_TITLES = [
  "Designer",
  "Engineer",
  "Nurse",
  "Teacher",
  "Analyst",
  "Manager",
  "Student",
] as const;
export const COMPANY_SIZES = ["1-10", "11-50", "51-200", "201-1000", "1000+"] as const;
export const SEGMENT_NAMES = [
  "Power users",
  "New sign-ups",
  "Churned",
  "Enterprise admins",
  "Mobile first",
  "Beta testers",
  "Healthcare",
  "Students",
  "Frequent buyers",
  "Newsletter readers",
] as const;
export const EMAIL_STATUSES = [
  "DELIVERED",
  "SENT",
  "OPENED",
  "CLICKED",
  "BOUNCED",
  "FAILED",
  "SCHEDULED",
] as const;
export const EMAIL_TYPES = [
  "INVITATION",
  "SCREENER",
  "REMINDER",
  "CONFIRMATION",
  "THANK_YOU",
  "CUSTOM",
] as const;
export const EMAIL_SUBJECTS = [
  "You're invited to a research study",
  "A few questions before we start",
  "Reminder: your session is tomorrow",
  "Your session is confirmed",
  "Thank you for taking part",
  "Quick update from our research team",
] as const;
export const PARTICIPANT_STATUSES = ["NOT_STARTED", "INVITED", "SCHEDULED", "COMPLETED", "CANCELED"] as const;
export const APPROVAL_STATUSES = ["HIDDEN", "PENDING", "APPROVED", "REJECTED"] as const;
export const SCREENER_STATES = ["SCREENER_SENT", "NOT_SENT", "QUALIFIED", "DISQUALIFIED"] as const;

/** The workspace's question templates (questionTemplate_1…4), one per concrete category. */
export const QUESTION_TEMPLATES: readonly QuestionRequest[] = [
  {
    category: "option",
    type: "SINGLE_SELECT",
    name: "How often do you shop online?",
    description: "Pick the closest answer.",
    isRequired: true,
    randomizeOrder: false,
    includeOther: false,
    includeNoneOfTheAbove: true,
    options: [{ value: "Daily" }, { value: "Weekly" }, { value: "Monthly" }, { value: "Rarely" }],
    rules: [{ operator: "IS", optionValues: ["Rarely", "NONE"], action: "DISQUALIFY" }],
  },
  { category: "simple", type: "NUMBER", name: "How old are you?", isRequired: true },
  {
    category: "dropdown",
    type: "DROPDOWN",
    name: "Which country do you live in?",
    isRequired: false,
    options: COUNTRIES.map((value) => ({ value })),
  },
  {
    category: "matrix",
    type: "MATRIX",
    name: "How do you rate these features?",
    isRequired: true,
    columns: ["Poor", "Fair", "Good", "Excellent"],
    rows: [{ value: "Search" }, { value: "Checkout" }, { value: "Notifications" }],
  },
];
