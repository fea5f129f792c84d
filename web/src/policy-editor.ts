import { TRPCClientError } from '@trpc/client';
import type { ApiClient } from './api-client.js';
import { announce, el, errorText } from './dom.js';
import { PageDialog } from './page-dialog.js';
import { ModelRuleRow, QuotaRow, type PolicyInput } from './policy-rows.js';

/** One problem the server found in the document: where (`['quotas', 0, 'tokens']`) and what. */
interface Issue {
  path: (string | number)[];
  message: string;
}

/** The validation issues of a 400 (CONTRACT §2's `details.issues`), if the error has them. */
function issuesOf(error: unknown): Issue[] | undefined {
  if (!(error instanceof TRPCClientError)) return undefined;
  const issues = (error.data as { details?: { issues?: unknown } } | undefined)?.details?.issues;
  if (!Array.isArray(issues)) return undefined;
  return issues.filter(
    (issue): issue is Issue =>
      typeof issue === 'object' &&
      issue !== null &&
      Array.isArray((issue as Issue).path) &&
      (issue as Issue).path.every((key) => typeof key === 'string' || typeof key === 'number') &&
      typeof (issue as Issue).message === 'string',
  );
}

function pathText(path: readonly (string | number)[]): string {
  return path.length === 0 ? 'the document' : path.map((key) => (typeof key === 'number' ? `[${String(key + 1)}]` : `.${key}`)).join('').replace(/^\./, '');
}

const changedAt = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

/**
 * The policy editor (CONTRACT §13, user:management): quotas per role or user and the models each
 * role may use, as a form over the whole document, saved with one PUT. The server validates the
 * document whole; each issue it names is shown beside the field its path points at (a rule's own
 * problem on the rule), and the focus goes to the first.
 */
export class PolicyEditor {
  readonly #dialog: PageDialog;
  readonly #form = el('form', { class: 'policy-form', id: 'policy-form', novalidate: true, 'aria-label': 'Policy document' });
  readonly #errors = el('div', { class: 'policy-errors', id: 'policy-errors', role: 'alert' });
  readonly #quotaList = el('div', { class: 'policy-rows', id: 'policy-quotas' });
  readonly #modelList = el('div', { class: 'policy-rows', id: 'policy-model-access' });
  readonly #status = el('p', { class: 'policy-status', id: 'policy-status', role: 'status' });
  readonly #save = el('button', { type: 'submit', class: 'primary', id: 'policy-save' }, 'Save');
  readonly #discard = el('button', { type: 'button', id: 'policy-discard' }, 'Discard changes');
  #quotas: QuotaRow[] = [];
  #models: ModelRuleRow[] = [];
  /** Changed since loaded or saved: opening again keeps the changes rather than reload over them. */
  #dirty = false;
  #loaded = false;
  /** Told after a save (the caller's budget and model list may have changed). */
  onSaved: () => void = () => undefined;

  constructor(
    private readonly client: ApiClient,
    fallbackFocus: () => HTMLElement | null,
  ) {
    this.#dialog = new PageDialog('policy-dialog', 'Policies', fallbackFocus);
    const addQuota = el('button', { type: 'button', id: 'policy-add-quota' }, 'Add a quota');
    const addModelRule = el('button', { type: 'button', id: 'policy-add-model-rule' }, 'Add a model rule');
    this.#form.append(
      this.#errors,
      el(
        'section',
        { class: 'policy-section', 'aria-labelledby': 'policy-quotas-title' },
        el('h3', { id: 'policy-quotas-title' }, 'Quotas'),
        el(
          'p',
          { class: 'policy-hint' },
          'Limits per minute, day or month (fixed UTC periods), checked before each model call. A user gets the most generous limit of their roles; a rule naming the user decides for them. An empty amount is no limit.',
        ),
        this.#quotaList,
        addQuota,
      ),
      el(
        'section',
        { class: 'policy-section', 'aria-labelledby': 'policy-models-title' },
        el('h3', { id: 'policy-models-title' }, 'Model access'),
        el(
          'p',
          { class: 'policy-hint' },
          'The models a role may use, as provider/model patterns where * matches anything (ollama/*, openai/gpt-4o-mini). A user whose roles have no rule may use every model.',
        ),
        this.#modelList,
        addModelRule,
      ),
      el('div', { class: 'dialog-buttons policy-buttons' }, this.#status, this.#discard, this.#save),
    );
    this.#dialog.body.append(this.#form);

    addQuota.addEventListener('click', () => {
      this.#addQuota(new QuotaRow(), true);
    });
    addModelRule.addEventListener('click', () => {
      this.#addModelRule(new ModelRuleRow(), true);
    });
    this.#discard.addEventListener('click', () => void this.load());
    this.#form.addEventListener('input', () => {
      this.#dirty = true;
    });
    this.#form.addEventListener('change', () => {
      this.#dirty = true;
    });
    this.#form.addEventListener('submit', (event) => {
      event.preventDefault();
      void this.save();
    });
  }

  open(opener: HTMLElement | null): void {
    this.#dialog.open(opener);
    if (!this.#dirty || !this.#loaded) void this.load();
  }

  async load(): Promise<void> {
    this.#status.textContent = 'Loading…';
    this.#errors.replaceChildren();
    try {
      const { policy, updatedAt } = await this.client.usage.policies.query();
      this.#show(policy);
      this.#loaded = true;
      this.#status.textContent = updatedAt === null ? 'No policy saved yet: no quotas, every model.' : `Last changed ${changedAt.format(new Date(updatedAt))}.`;
    } catch (error) {
      this.#status.textContent = `Could not load the policy: ${errorText(error)}`;
    }
  }

  async save(): Promise<void> {
    for (const row of [...this.#quotas, ...this.#models]) row.clearErrors();
    this.#errors.replaceChildren();
    const document: PolicyInput = { quotas: this.#quotas.map((row) => row.value()), modelAccess: this.#models.map((row) => row.value()) };
    this.#save.disabled = true;
    this.#status.textContent = 'Saving…';
    try {
      const saved = await this.client.usage.setPolicies.mutate(document);
      this.#show(saved.policy);
      this.#status.textContent = `Saved ${changedAt.format(new Date(saved.updatedAt ?? Date.now()))}; it applies on every instance now.`;
      announce('The policy is saved.');
      this.onSaved();
    } catch (error) {
      const issues = issuesOf(error);
      this.#status.textContent = '';
      if (issues && issues.length > 0) this.#showIssues(issues);
      else this.#errors.replaceChildren(el('p', {}, `Not saved: ${errorText(error)}`));
    } finally {
      this.#save.disabled = false;
    }
  }

  #show(policy: PolicyInput): void {
    this.#quotas = [];
    this.#models = [];
    this.#quotaList.replaceChildren();
    this.#modelList.replaceChildren();
    for (const rule of policy.quotas) this.#addQuota(new QuotaRow(rule), false);
    for (const rule of policy.modelAccess) this.#addModelRule(new ModelRuleRow(rule), false);
    this.#dirty = false;
  }

  #addQuota(row: QuotaRow, focus: boolean): void {
    this.#add(row, this.#quotas, this.#quotaList, focus);
  }

  #addModelRule(row: ModelRuleRow, focus: boolean): void {
    this.#add(row, this.#models, this.#modelList, focus);
  }

  #add<R extends QuotaRow | ModelRuleRow>(row: R, rows: R[], list: HTMLElement, focus: boolean): void {
    rows.push(row);
    list.append(row.element);
    row.number(rows.length - 1);
    row.removeButton.addEventListener('click', () => {
      const index = rows.indexOf(row);
      rows.splice(index, 1);
      row.element.remove();
      rows.forEach((each, position) => {
        each.number(position);
      });
      this.#dirty = true;
      // The focus stays in the list: on the rule that took this one's place, or on the one before.
      const next = rows[index] ?? rows[index - 1];
      const fallback = list.nextElementSibling;
      (next?.removeButton ?? (fallback instanceof HTMLElement ? fallback : undefined))?.focus();
    });
    if (focus) {
      this.#dirty = true;
      row.firstControl?.focus();
    }
  }

  /** Each issue beside its field; those no field answers (the document's own) listed on top. */
  #showIssues(issues: Issue[]): void {
    const elsewhere: Issue[] = [];
    for (const issue of issues) {
      const [section, index, ...rest] = issue.path;
      const rows = section === 'quotas' ? this.#quotas : section === 'modelAccess' ? this.#models : undefined;
      const row = typeof index === 'number' ? rows?.[index] : undefined;
      if (row) row.showIssue(rest, issue.message);
      else elsewhere.push(issue);
    }
    const placed = issues.length - elsewhere.length;
    const count = `${String(issues.length)} ${issues.length === 1 ? 'problem' : 'problems'}`;
    this.#errors.replaceChildren(
      el('p', {}, `Not saved: the server found ${count}${placed > 0 ? ', marked beside the fields' : ''}.`),
    );
    if (elsewhere.length > 0) this.#errors.append(el('ul', {}, ...elsewhere.map((issue) => el('li', {}, `${pathText(issue.path)}: ${issue.message}`))));
    const first = [...this.#quotas, ...this.#models].map((row) => row.firstInvalid()).find((control) => control !== undefined);
    first?.focus();
  }
}
