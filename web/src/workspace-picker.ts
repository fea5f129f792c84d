import { appCodeOf, type ApiClient } from './api-client.js';
import { announce, el, errorText } from './dom.js';

/** The caller's active workspace, its branch (switchable) and its Git status. */
export class WorkspacePicker {
  readonly #select = el('select', { id: 'workspace-select', name: 'workspace' });
  readonly #branch = el('select', { id: 'branch-select', name: 'branch' });
  readonly #state = el('span', { class: 'workspace-state', id: 'workspace-state' });
  readonly #status = el('span', { class: 'picker-status', id: 'workspace-status', role: 'status' });
  // Acting is a button, not the selects' change: arrow keys on a closed select change it too, and
  // each step would switch the workspace or check out a branch.
  readonly #switch = el('button', { type: 'button', id: 'workspace-switch', hidden: true }, 'Switch');
  readonly #checkout = el('button', { type: 'button', id: 'branch-checkout', hidden: true }, 'Check out');

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
        this.#status,
      ),
    );
    // Shown only while the choice differs from what is active, so there is one obvious next step.
    this.#select.addEventListener('change', () => {
      this.#switch.hidden = this.#select.value === this.#selected(this.#select);
    });
    this.#branch.addEventListener('change', () => {
      this.#checkout.hidden = this.#branch.value === this.#selected(this.#branch);
    });
    this.#switch.addEventListener('click', () => void this.#switchWorkspace());
    this.#checkout.addEventListener('click', () => void this.#switchBranch());
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
      this.#select.disabled = workspaces.length === 0;
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
}
