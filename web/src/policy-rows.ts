import type { inferRouterInputs } from '@trpc/server';
import { roles, type Role } from '../../src/core/auth/permissions.js';
import type { AppRouter } from '../../src/routers/app-router.js';
import { el } from './dom.js';
import type { QuotaWindow } from './usage-format.js';

export type PolicyInput = inferRouterInputs<AppRouter>['usage']['setPolicies'];
export type QuotaRuleInput = NonNullable<PolicyInput['quotas']>[number];
export type ModelRuleInput = NonNullable<PolicyInput['modelAccess']>[number];

/** A path inside one rule, as the server's validation issues name it (after `quotas, 0`). */
export type RulePath = readonly (string | number)[];

let nextId = 0;

/**
 * A labelled control with the place for its errors: an error marks the control invalid and is
 * read with it (aria-describedby), so it is found where the mistake is, not in a list elsewhere.
 */
class Field<C extends HTMLInputElement | HTMLSelectElement> {
  readonly element: HTMLElement;
  readonly #error: HTMLElement;

  constructor(
    label: string,
    readonly control: C,
    name: string,
  ) {
    const id = `policy-${String(++nextId)}-${name}`;
    control.id = id;
    control.name = name;
    control.dataset.field = name;
    this.#error = el('span', { class: 'field-error', id: `${id}-error` });
    control.setAttribute('aria-describedby', this.#error.id);
    this.element = el('span', { class: `policy-field policy-field-${name}` }, el('label', { for: id }, label), control, this.#error);
  }

  showError(message: string): void {
    this.control.setAttribute('aria-invalid', 'true');
    this.#error.textContent = this.#error.textContent ? `${this.#error.textContent} ${message}` : message;
  }

  clearError(): void {
    this.control.removeAttribute('aria-invalid');
    this.#error.textContent = '';
  }
}

function select<V extends string>(options: readonly (readonly [V, string])[], value: V): HTMLSelectElement {
  return el('select', {}, ...options.map(([option, text]) => el('option', { value: option, selected: option === value }, text)));
}

const roleOptions = roles.map((role) => [role, role] as const);

/** One rule of a policy section on screen: its fields, its remove button and its own error line. */
abstract class RuleRow {
  readonly element: HTMLFieldSetElement;
  readonly removeButton = el('button', { type: 'button', class: 'policy-remove' }, 'Remove');
  readonly #legend = el('legend', {});
  readonly #rowError = el('p', { class: 'field-error policy-row-error' });
  protected abstract readonly fields: Field<HTMLInputElement | HTMLSelectElement>[];

  constructor(
    private readonly noun: string,
    className: string,
  ) {
    this.element = el('fieldset', { class: `policy-row ${className}` }, this.#legend);
  }

  protected assemble(...parts: HTMLElement[]): void {
    this.element.append(el('div', { class: 'policy-fields' }, ...parts, this.removeButton), this.#rowError);
  }

  /** Rows are numbered by position, as the server's issue paths count them (from 0, shown from 1). */
  number(index: number): void {
    this.#legend.textContent = `${this.noun} ${String(index + 1)}`;
    this.removeButton.setAttribute('aria-label', `Remove ${this.noun.toLowerCase()} ${String(index + 1)}`);
  }

  /** The first control: where the focus goes when the row is added. */
  get firstControl(): HTMLElement | undefined {
    return this.fields[0]?.control;
  }

  clearErrors(): void {
    for (const field of this.fields) field.clearError();
    this.#rowError.textContent = '';
    this.element.removeAttribute('aria-invalid');
  }

  /** Shows an issue where its path points; a path no field answers is the row's own. */
  showIssue(path: RulePath, message: string): void {
    const field = this.fieldAt(path);
    if (field) {
      field.showError(this.describe(path, message));
      return;
    }
    this.element.setAttribute('aria-invalid', 'true');
    this.#rowError.textContent = this.#rowError.textContent ? `${this.#rowError.textContent} ${message}` : message;
  }

  /** The first control marked invalid, or the row itself when only it is. */
  firstInvalid(): HTMLElement | undefined {
    const field = this.fields.find((each) => each.control.getAttribute('aria-invalid') === 'true');
    if (field) return field.control;
    return this.#rowError.textContent ? this.firstControl : undefined;
  }

  protected abstract fieldAt(path: RulePath): Field<HTMLInputElement | HTMLSelectElement> | undefined;

  protected describe(_path: RulePath, message: string): string {
    return message;
  }
}

const windowOptions = [
  ['minute', 'minute'],
  ['day', 'day (UTC)'],
  ['month', 'month (UTC)'],
] as const;

function amount(name: string, step: string): HTMLInputElement {
  return el('input', { type: 'number', min: '0', step, inputmode: step === '1' ? 'numeric' : 'decimal', placeholder: 'no limit', class: `policy-amount-${name}` });
}

/** A quota: who it holds (a role or one user), its window, and its limits in tokens, USD and requests. */
export class QuotaRow extends RuleRow {
  readonly #kind: Field<HTMLSelectElement>;
  readonly #role: Field<HTMLSelectElement>;
  readonly #user: Field<HTMLInputElement>;
  readonly #window: Field<HTMLSelectElement>;
  readonly #tokens: Field<HTMLInputElement>;
  readonly #cost: Field<HTMLInputElement>;
  readonly #requests: Field<HTMLInputElement>;
  protected readonly fields: Field<HTMLInputElement | HTMLSelectElement>[];

  constructor(rule?: QuotaRuleInput) {
    super('Quota', 'policy-quota');
    const subject = rule?.subject ?? { role: 'User' as Role };
    const byUser = 'userId' in subject;
    this.#kind = new Field(
      'Applies to',
      select(
        [
          ['role', 'a role'],
          ['user', 'one user'],
        ],
        byUser ? 'user' : 'role',
      ),
      'kind',
    );
    this.#role = new Field('Role', select(roleOptions, 'role' in subject ? subject.role : 'User'), 'role');
    this.#user = new Field('User id', el('input', { type: 'text', autocomplete: 'off', spellcheck: 'false', value: byUser ? subject.userId : '' }), 'userId');
    this.#window = new Field('Per', select(windowOptions, rule?.window ?? 'day'), 'window');
    this.#tokens = new Field('Tokens', amount('tokens', '1'), 'tokens');
    this.#cost = new Field('Cost (USD)', amount('costUsd', 'any'), 'costUsd');
    this.#requests = new Field('Requests', amount('requests', '1'), 'requests');
    this.#tokens.control.value = rule?.tokens === undefined ? '' : String(rule.tokens);
    this.#cost.control.value = rule?.costUsd === undefined ? '' : String(rule.costUsd);
    this.#requests.control.value = rule?.requests === undefined ? '' : String(rule.requests);
    this.fields = [this.#kind, this.#role, this.#user, this.#window, this.#tokens, this.#cost, this.#requests];
    this.assemble(...this.fields.map((field) => field.element));
    this.#kind.control.addEventListener('change', () => {
      this.#showSubject();
    });
    this.#showSubject();
  }

  #showSubject(): void {
    const byUser = this.#kind.control.value === 'user';
    this.#role.element.hidden = byUser;
    this.#user.element.hidden = !byUser;
  }

  value(): QuotaRuleInput {
    const subject = this.#kind.control.value === 'user' ? { userId: this.#user.control.value.trim() } : { role: this.#role.control.value as Role };
    // An empty amount is no limit; what the browser cannot read as a number is empty too, and the
    // server then says the rule has no limit, on this row.
    const read = (field: Field<HTMLInputElement>) => (field.control.value === '' ? undefined : Number(field.control.value));
    const tokens = read(this.#tokens);
    const costUsd = read(this.#cost);
    const requests = read(this.#requests);
    return {
      subject,
      window: this.#window.control.value as QuotaWindow,
      ...(tokens === undefined ? {} : { tokens }),
      ...(costUsd === undefined ? {} : { costUsd }),
      ...(requests === undefined ? {} : { requests }),
    };
  }

  protected fieldAt(path: RulePath): Field<HTMLInputElement | HTMLSelectElement> | undefined {
    const [first, second] = path;
    if (first === 'subject') {
      if (second === 'role') return this.#role;
      if (second === 'userId') return this.#user;
      return this.#kind;
    }
    return this.fields.find((field) => field.control.name === first);
  }
}

/** Splits "openai/*, ollama/llama3.2" (commas, spaces or lines between) into patterns. */
function patternsOf(text: string): string[] {
  return text.split(/[\s,]+/).filter((pattern) => pattern !== '');
}

/** Model access: the `provider/model` patterns one role may use. */
export class ModelRuleRow extends RuleRow {
  readonly #role: Field<HTMLSelectElement>;
  readonly #allow: Field<HTMLInputElement>;
  protected readonly fields: Field<HTMLInputElement | HTMLSelectElement>[];
  /** The patterns as last sent, so an issue about pattern 2 can quote it. */
  #sent: string[] = [];

  constructor(rule?: ModelRuleInput) {
    super('Model rule', 'policy-model-rule');
    this.#role = new Field('Role', select(roleOptions, rule?.role ?? 'User'), 'role');
    this.#allow = new Field(
      'Allowed models',
      el('input', { type: 'text', autocomplete: 'off', spellcheck: 'false', placeholder: 'ollama/*, openai/gpt-4o-mini', value: rule?.allow.join(', ') ?? '' }),
      'allow',
    );
    this.fields = [this.#role, this.#allow];
    this.assemble(...this.fields.map((field) => field.element));
  }

  value(): ModelRuleInput {
    this.#sent = patternsOf(this.#allow.control.value);
    return { role: this.#role.control.value as Role, allow: this.#sent };
  }

  protected fieldAt(path: RulePath): Field<HTMLInputElement | HTMLSelectElement> | undefined {
    if (path[0] === 'role') return this.#role;
    if (path[0] === 'allow') return this.#allow;
    return undefined;
  }

  protected override describe(path: RulePath, message: string): string {
    const index = path[1];
    const pattern = typeof index === 'number' ? this.#sent[index] : undefined;
    return pattern === undefined ? message : `“${pattern}”: ${message}`;
  }
}
