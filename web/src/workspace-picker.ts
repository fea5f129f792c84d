import { appCodeOf, type ApiClient } from './api-client.js';
import type { Caller, CallerAware } from './caller.js';
import { announce, el, errorText } from './dom.js';

/**
 * The caller's active workspace, its branch (switchable) and its Git status; and registering a
 * folder as a workspace or unregistering one (its files stay), under Manage. Everyone sees the
 * active workspace and branch; switching either needs workspaces:switch, and Manage also one of
 * Dev, Lead, TheDude (CONTRACT §5), so until the caller is known both are off.
 */
export class WorkspacePicker implements CallerAware {
  readonly #select = el('select', { id: 'workspace-select', name: 'workspace' });
  readonly #branch = el('select', { id: 'branch-select', name: 'branch' });
  readonly #state = el('span', { class: 'workspace-state', id: 'workspace-state' });
  readonly #status = el('span', { class: 'picker-status', id: 'workspace-status', role: 'status' });
  // Acting is a button, not the selects' change: arrow keys on a closed select change it too, and
  // each step would switch the workspace or check out a branch.
  readonly #switch = el('button', { type: 'button', id: 'workspace-switch', hidden: true }, 'Switch');
  readonly #checkout = el('button', { type: 'button', id: 'branch-checkout', hidden: true }, 'Check out');
  readonly #manage = el('details', { class: 'picker-more', id: 'workspace-manage', hidden: true });
  readonly #name = el('input', { type: 'text', id: 'workspace-name', name: 'name', required: true, maxlength: '200', placeholder: 'e.g. website' });
  readonly #path = el('input', { type: 'text', id: 'workspace-path', name: 'path', required: true, placeholder: '/srv/projects/website', spellcheck: 'false' });
  readonly #remove = el('button', { type: 'button', id: 'workspace-remove', class: 'danger' }, 'Remove selected');
  /** In the form, wrapping: the server's reason for a refusal is read whole, not cut to fit the bar. */
  readonly #formStatus = el('p', { class: 'workspace-form-status', id: 'workspace-form-status', role: 'status' });
  #maySwitch = false;
  #registered = 0;

  constructor(
    root: HTMLElement,
    private readonly client: ApiClient,
    private readonly onSwitched: () => void,
  ) {
    root.append(
      el(
        'div',
        { class: 'picker' },
        el('label', { for: 'workspace-select' }, 'Workspace'),
        this.#select,
        this.#switch,
        el('label', { for: 'branch-select', class: 'sr-only' }, 'Branch'),
        this.#branch,
        this.#checkout,
        this.#state,
        this.#manage,
        this.#status,
      ),
    );
    const addForm = el(
      'form',
      { class: 'workspace-form', 'aria-label': 'Add a workspace' },
      el('label', { for: 'workspace-name' }, 'Name'),
      this.#name,
      el('label', { for: 'workspace-path' }, 'Folder on the server'),
      this.#path,
      el('div', { class: 'workspace-form-buttons' }, el('button', { type: 'submit', class: 'primary', id: 'workspace-add' }, 'Add workspace'), this.#remove),
      this.#formStatus,
    );
    this.#manage.append(el('summary', {}, 'Manage'), addForm);
    addForm.addEventListener('submit', (event) => {
      event.preventDefault();
      void this.#add();
    });
    this.#remove.addEventListener('click', () => void this.#removeSelected());
    // Shown only while the choice differs from what is active, so there is one obvious next step.
    this.#select.addEventListener('change', () => {
      this.#switch.hidden = !this.#maySwitch || this.#select.value === this.#selected(this.#select);
    });
    this.#branch.addEventListener('change', () => {
      this.#checkout.hidden = !this.#maySwitch || this.#branch.value === this.#selected(this.#branch);
    });
    this.#applyAccess();
    this.#switch.addEventListener('click', () => void this.#switchWorkspace());
    this.#checkout.addEventListener('click', () => void this.#switchBranch());
  }

  showFor(caller: Caller): void {
    this.#maySwitch = caller.may('workspaces:switch');
    this.#manage.hidden = !(this.#maySwitch && caller.holdsAnyRole(['Dev', 'Lead', 'TheDude']));
    if (this.#manage.hidden) this.#manage.open = false;
    this.#applyAccess();
  }

  /**
   * The lists show what is active to everyone; they are choosable only by a caller who may switch,
   * since choosing is the first step of switching.
   */
  #applyAccess(): void {
    const reason = this.#maySwitch ? undefined : 'Your role cannot switch workspaces or branches';
    for (const select of [this.#select, this.#branch]) {
      if (reason) select.title = reason;
      else select.removeAttribute('title');
    }
    this.#select.disabled = this.#registered === 0 || !this.#maySwitch;
    this.#branch.disabled = !this.#maySwitch;
    this.#remove.disabled = this.#registered === 0;
    if (!this.#maySwitch) {
      this.#switch.hidden = true;
      this.#checkout.hidden = true;
    }
  }

  /** The value the select was last filled with as active (its `selected` option). */
  #selected(select: HTMLSelectElement): string {
    return [...select.options].find((option) => option.defaultSelected)?.value ?? '';
  }

  async refresh(): Promise<void> {
    this.#switch.hidden = true;
    this.#checkout.hidden = true;
    try {
      const { workspaces } = await this.client.workspaces.list.query({});
      const active = workspaces.find((workspace) => workspace.active) ?? workspaces[0];
      this.#registered = workspaces.length;
      this.#applyAccess();
      this.#select.replaceChildren(
        ...(workspaces.length === 0 ? [el('option', { value: '' }, 'none registered')] : []),
        ...workspaces.map((workspace) => el('option', { value: workspace.id, selected: workspace.id === active?.id, title: workspace.path }, workspace.name)),
      );
      if (!active) {
        this.#branch.hidden = true;
        this.#state.textContent = '';
        return;
      }
      const changes = active.changes ? ` · ${active.changes.modified} modified, ${active.changes.untracked} untracked` : '';
      this.#state.textContent = `${active.status}${changes}`;
      this.#state.dataset.status = active.status;
      await this.#loadBranches(active.id, active.branch);
    } catch (error) {
      this.#status.textContent = `Workspaces unavailable: ${errorText(error)}`;
    }
  }

  async #loadBranches(workspaceId: string, currentBranch: string): Promise<void> {
    this.#branch.hidden = currentBranch === '';
    if (currentBranch === '') return;
    try {
      const { branches } = await this.client.workspaces.branches.query({ workspaceId });
      this.#branch.replaceChildren(...branches.map((branch) => el('option', { value: branch.name, selected: branch.current }, `⎇ ${branch.name}`)));
    } catch {
      this.#branch.replaceChildren(el('option', { value: currentBranch }, `⎇ ${currentBranch}`));
    }
  }

  async #switchWorkspace(): Promise<void> {
    try {
      const { activeWorkspace } = await this.client.workspaces.switch.mutate({ workspaceId: this.#select.value });
      announce(`Workspace ${activeWorkspace.name} is active`);
      this.onSwitched();
    } catch (error) {
      this.#status.textContent = appCodeOf(error) === 'FORBIDDEN' ? 'Your role cannot switch workspaces.' : `Could not switch: ${errorText(error)}`;
    }
    await this.refresh();
  }

  async #switchBranch(): Promise<void> {
    try {
      const { currentBranch } = await this.client.workspaces.switchBranch.mutate({ workspaceId: this.#select.value, branchName: this.#branch.value });
      announce(`Checked out ${currentBranch}`);
    } catch (error) {
      this.#status.textContent = `Could not check out: ${errorText(error)}`;
    }
    await this.refresh();
  }

  async #add(): Promise<void> {
    const name = this.#name.value.trim();
    const path = this.#path.value.trim();
    if (!name || !path) return;
    this.#formStatus.textContent = '';
    try {
      const { workspace } = await this.client.workspaces.add.mutate({ name, path });
      this.#name.value = '';
      this.#path.value = '';
      this.#formStatus.textContent = `Added ${workspace.name}. Choose it in the list and Switch to use it.`;
      announce(`Workspace ${workspace.name} added`);
    } catch (error) {
      // The server says why (not a folder, not allowed, a name in use…): its words are shown as they are.
      this.#formStatus.textContent = appCodeOf(error) === 'FORBIDDEN' ? 'Your role cannot add workspaces.' : `Not added: ${errorText(error)}`;
      return;
    }
    await this.refresh();
  }

  /** Unregisters the workspace chosen in the list; its files are not touched. */
  async #removeSelected(): Promise<void> {
    const option = this.#select.selectedOptions[0];
    if (!option?.value) return;
    const name = option.textContent;
    if (!confirm(`Remove the workspace “${name}”? Its files stay on disk.`)) return;
    this.#formStatus.textContent = '';
    try {
      await this.client.workspaces.delete.mutate({ workspaceId: option.value });
      this.#formStatus.textContent = `Removed ${name}; its files were not touched.`;
      announce(`Workspace ${name} removed`);
      this.onSwitched();
    } catch (error) {
      this.#formStatus.textContent = appCodeOf(error) === 'FORBIDDEN' ? 'Your role cannot remove workspaces.' : `Not removed: ${errorText(error)}`;
      return;
    }
    await this.refresh();
  }
}
