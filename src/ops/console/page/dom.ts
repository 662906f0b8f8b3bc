// The page's own markup, reached by id, and the few shapes the script builds
// in it. Every value is put in as text (textContent), never as markup.

/** The element of this id, of the kind the script expects: the page's markup has each one. */
export function byId<T extends HTMLElement>(id: string, kind: abstract new () => T): T {
  const node = document.getElementById(id);
  if (!(node instanceof kind)) throw new Error(`the console's page has no ${kind.name} #${id}`);
  return node;
}

export const box = (id: string): HTMLElement => byId(id, HTMLElement);
export const field = (id: string): HTMLInputElement => byId(id, HTMLInputElement);
export const menu = (id: string): HTMLSelectElement => byId(id, HTMLSelectElement);
export const button = (id: string): HTMLButtonElement => byId(id, HTMLButtonElement);

/** An element holding `text` as text, with these attributes. */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  text?: string | number | null,
  attrs: Record<string, string> = {},
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, value);
  return node;
}

/** A table's header row: one column header cell per name. */
export function setHead(tableId: string, headers: readonly string[]): void {
  const head = el("tr");
  for (const h of headers) head.append(el("th", h, { scope: "col" }));
  part(tableId, "thead").replaceChildren(head);
}

function part(tableId: string, tag: "thead" | "tbody" | "caption"): HTMLElement {
  const found = byId(tableId, HTMLTableElement).querySelector(tag);
  if (!(found instanceof HTMLElement)) throw new Error(`the console's table #${tableId} has no ${tag}`);
  return found;
}

export const caption = (tableId: string): HTMLElement => part(tableId, "caption");

/** A table of text: its header row and a row of cells per item. */
export function fillTable(tableId: string, headers: readonly string[], rows: readonly string[][]): void {
  setHead(tableId, headers);
  part(tableId, "tbody").replaceChildren(
    ...rows.map((cells) => {
      const tr = el("tr");
      for (const c of cells) tr.append(el("td", c));
      return tr;
    }),
  );
}

/** A table's body: a row per item, or one muted line across every column when there is none. */
export function fillRows<T>(
  tableId: string,
  items: readonly T[],
  emptyText: string,
  toRow: (item: T) => HTMLElement,
): void {
  const body = part(tableId, "tbody");
  if (!items.length) {
    const empty = el("tr");
    const columns = String(part(tableId, "thead").querySelectorAll("th").length);
    empty.append(el("td", emptyText, { colspan: columns, class: "muted" }));
    body.replaceChildren(empty);
    return;
  }
  body.replaceChildren(...items.map(toRow));
}

/** Figures in large print, each over its label. */
export function counts(id: string, pairs: readonly (readonly [string, number])[]): void {
  box(id).replaceChildren(...pairs.map(([label, value]) => figure(value.toLocaleString(), label)));
}

/** One figure of a `counts` box. */
export function figure(value: string, label: string): HTMLElement {
  const node = el("div");
  node.append(el("strong", value), el("span", label, { class: "muted" }));
  return node;
}
