import type { Caller, CallerAware } from './caller.js';
import { el } from './dom.js';
import type { PolicyEditor } from './policy-editor.js';
import type { UsagePage } from './usage-page.js';

/**
 * The way to the Usage page and, for TheDude (user:management), the policy editor: buttons at the
 * foot of the conversation list, so on a narrow screen they are in the drawer with the rest of
 * the navigation. What the caller may see is the server's answer (`/api/auth/me`, see caller.ts),
 * which knows the roles whether they came from a token or from local mode.
 */
export class UsageNavigation implements CallerAware {
  readonly #usageButton = el('button', { type: 'button', id: 'usage-open', 'aria-haspopup': 'dialog' }, 'Usage');
  readonly #policyButton = el('button', { type: 'button', id: 'policies-open', 'aria-haspopup': 'dialog', hidden: true }, 'Policies');
  /**
   * A page is being opened from `button`: answers where the focus goes back when it closes (the
   * button, or the drawer's own button when the drawer it is in closes for the page).
   */
  onOpen: (button: HTMLElement) => HTMLElement = (button) => button;

  constructor(
    root: HTMLElement,
    private readonly usage: UsagePage,
    private readonly policies: PolicyEditor,
  ) {
    root.append(el('div', { class: 'sidebar-links', role: 'group', 'aria-label': 'Usage and policies' }, this.#usageButton, this.#policyButton));
    this.#usageButton.addEventListener('click', () => {
      this.usage.open(this.onOpen(this.#usageButton));
    });
    this.#policyButton.addEventListener('click', () => {
      this.policies.open(this.onOpen(this.#policyButton));
    });
  }

  /** Shows what the caller's permissions allow. */
  showFor(caller: Caller): void {
    this.usage.setViewer({ canAudit: caller.may('audit:view') });
    this.#policyButton.hidden = !caller.may('user:management');
  }
}
