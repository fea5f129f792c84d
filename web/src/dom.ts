/** Children accepted by `el`: nodes, text, or nothing (skipped, so conditionals read inline). */
export type Child = Node | string | null | undefined | false;

/**
 * Creates an element with attributes and children. Attribute values are set with setAttribute and
 * text children become text nodes, so nothing here is ever parsed as HTML.
 */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Record<string, string | boolean | undefined> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === false) continue;
    element.setAttribute(name, value === true ? '' : value);
  }
  element.append(...children.filter((child): child is Node | string => child !== null && child !== undefined && child !== false));
  return element;
}

/** Finds an element the page must have; a missing one is a build mistake, so it throws. */
export function byId(id: string): HTMLElement {
  const element = document.getElementById(id);
  if (!element) throw new Error(`#${id} is missing from index.html`);
  return element;
}

/** Says something to screen-reader users through the page's one polite live region. */
export function announce(message: string): void {
  const announcer = byId('announcer');
  // Clearing first makes a repeated message be read again.
  announcer.textContent = '';
  requestAnimationFrame(() => {
    announcer.textContent = message;
  });
}

/** The message of anything thrown, for showing to the user. */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
