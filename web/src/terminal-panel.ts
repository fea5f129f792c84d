import type { Terminal } from '@xterm/xterm';
import type { FitAddon } from '@xterm/addon-fit';
import { appCodeOf, type ApiClient } from './api-client.js';
import type { TokenHolder } from './auth-session.js';
import type { Caller, CallerAware } from './caller.js';
import { outcomeText, type ConfirmationDialog, type HeldCommand, type HeldOutcome } from './confirmation-dialog.js';
import { el, errorText } from './dom.js';

type TerminalFrame =
  | { type: 'output'; data: string }
  | { type: 'status'; status: 'running' | 'busy' | 'exited' }
  | { type: 'exit'; exitCode: number }
  | { type: 'confirmation_required'; commandId: string; command: string; risk: string; reasons: string[] }
  | { type: 'error'; code: string; message: string };

/**
 * A sandboxed shell over its WebSocket (`/api/terminals/:id/ws`). Commands are sent whole from
 * the command field (each goes through risk analysis and may be held); keystrokes typed into the
 * terminal reach only a program that is running, as the server allows. xterm is loaded on first
 * open, so the chat does not pay for it. Offered only to callers who may start and use a terminal.
 */
export class TerminalPanel implements CallerAware {
  readonly #screen = el('div', { class: 'terminal-screen', id: 'terminal-screen' });
  // The visible label is a "$" prompt, which a screen reader would read as "dollar".
  readonly #command = el('input', { type: 'text', id: 'terminal-command', name: 'command', 'aria-label': 'Command', autocomplete: 'off', spellcheck: 'false', placeholder: 'ls -la' });
  readonly #state = el('span', { class: 'terminal-state', id: 'terminal-state', role: 'status' }, 'not started');
  readonly #interrupt = el('button', { type: 'button', disabled: true }, 'Ctrl-C');
  /** The top bar's button that shows and hides this panel; hidden until the caller is known to hold terminal:*. */
  readonly toggleButton = el('button', { type: 'button', id: 'terminal-toggle', 'aria-controls': 'terminal-panel', 'aria-expanded': 'false', hidden: true }, 'Terminal');
  #terminal: Terminal | null = null;
  /** The start-up under way: a second open (Run, ✕ then Terminal again) waits for it instead of starting another. */
  #opening: Promise<void> | null = null;
  #fit: FitAddon | null = null;
  #socket: WebSocket | null = null;
  #terminalId: string | null = null;
  #status: 'running' | 'busy' | 'exited' | 'closed' = 'closed';
  #lastExitCode: number | null = null;

  constructor(
    private readonly root: HTMLElement,
    private readonly client: ApiClient,
    private readonly tokens: TokenHolder,
    private readonly confirmations: ConfirmationDialog,
  ) {
    const form = el(
      'form',
      { class: 'terminal-form' },
      el('label', { for: 'terminal-command' }, '$'),
      this.#command,
      el('button', { type: 'submit', class: 'primary' }, 'Run'),
      this.#interrupt,
    );
    // Hiding keeps the terminal and its socket: what runs there goes on, and showing it again is instant.
    const close = el('button', { type: 'button', class: 'icon-button', 'aria-label': 'Hide terminal', title: 'Hide terminal' }, '✕');
    root.append(el('div', { class: 'terminal-header' }, el('h2', {}, 'Terminal'), this.#state, close), this.#screen, form);
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      this.#execute();
    });
    this.#interrupt.addEventListener('click', () => {
      this.#send({ type: 'input', data: '\u0003' });
    });
    close.addEventListener('click', () => {
      this.toggle(false);
      this.toggleButton.focus();
    });
    this.toggleButton.addEventListener('click', () => {
      this.toggle();
    });
    tokens.onRenew((token) => {
      this.#send({ type: 'auth', token });
    });
    new ResizeObserver(() => {
      this.#resize();
    }).observe(this.#screen);
  }

  /**
   * Opening reattaches to the caller's terminal (terminal:execute) or starts one (terminal:create):
   * without both the panel would only show the server's refusal. A caller who lost them (new
   * roles at a token renewal) has the panel closed; what runs in it is the server's to end.
   */
  showFor(caller: Caller): void {
    const may = caller.may('terminal:create') && caller.may('terminal:execute');
    this.toggleButton.hidden = !may;
    if (!may && !this.root.hidden) this.toggle(false);
  }

  /** Shows or hides the panel; the first showing starts (or reattaches to) a terminal. */
  toggle(show = this.root.hidden): void {
    this.root.hidden = !show;
    this.toggleButton.setAttribute('aria-expanded', String(show));
    if (show) {
      void this.#open().then(() => {
        this.#command.focus();
      });
    }
  }

  #open(): Promise<void> {
    if (this.#socket) return Promise.resolve();
    this.#opening ??= this.#start().finally(() => {
      this.#opening = null;
    });
    return this.#opening;
  }

  async #start(): Promise<void> {
    try {
      await this.#ensureXterm();
      const { terminals } = await this.client.terminals.list.query({});
      const reusable = terminals.find((terminal) => terminal.status !== 'exited');
      this.#terminalId = reusable?.terminalId ?? (await this.client.terminals.create.mutate({})).terminalId;
      this.#connect(this.#terminalId);
    } catch (error) {
      const code = appCodeOf(error);
      this.#setState(code === 'SECURITY_VIOLATION' || code === 'FORBIDDEN' || code === 'WORKSPACE_ERROR' ? errorText(error) : `could not start: ${errorText(error)}`);
    }
  }

  async #ensureXterm(): Promise<void> {
    if (this.#terminal) return;
    const [{ Terminal }, { FitAddon }] = await Promise.all([import('@xterm/xterm'), import('@xterm/addon-fit'), import('@xterm/xterm/css/xterm.css')]);
    const terminal = new Terminal({ convertEol: false, cursorBlink: false, fontSize: 13, scrollback: 5000, screenReaderMode: true });
    const fit = new FitAddon();
    terminal.loadAddon(fit);
    terminal.open(this.#screen);
    terminal.onData((data) => {
      // At the prompt the server refuses input; typing there would only produce error frames.
      if (this.#status === 'busy') this.#send({ type: 'input', data });
    });
    this.#terminal = terminal;
    this.#fit = fit;
    this.#resize();
  }

  #connect(terminalId: string): void {
    // The server replays the terminal's recent output on connecting: a reconnect starts from a
    // clean screen, or that output would show twice.
    this.#terminal?.reset();
    this.#lastExitCode = null;
    const url = this.tokens.withToken(new URL(`/api/terminals/${encodeURIComponent(terminalId)}/ws`, location.href));
    url.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
    const socket = new WebSocket(url);
    this.#socket = socket;
    socket.addEventListener('open', () => {
      this.#resize();
    });
    socket.addEventListener('message', (message: MessageEvent<string>) => {
      this.#onFrame(JSON.parse(message.data) as TerminalFrame);
    });
    socket.addEventListener('close', () => {
      if (this.#socket === socket) this.#socket = null;
      if (this.#status !== 'exited') this.#setState('disconnected (reopen to reconnect)');
      this.#status = 'closed';
    });
  }

  #onFrame(frame: TerminalFrame): void {
    switch (frame.type) {
      case 'output':
        this.#terminal?.write(frame.data);
        return;
      case 'status':
        this.#status = frame.status;
        this.#interrupt.disabled = frame.status !== 'busy';
        this.#setState(frame.status === 'running' ? (this.#lastExitCode === null ? 'ready' : `ready (last exit code ${this.#lastExitCode})`) : frame.status);
        if (frame.status === 'exited') this.#socket?.close();
        return;
      case 'exit':
        // The shell's `status: running` follows at once; the code is shown with it.
        this.#lastExitCode = frame.exitCode;
        return;
      case 'confirmation_required':
        this.#terminal?.write(`\r\n\x1b[33m[held for confirmation: ${frame.risk} risk]\x1b[0m\r\n`);
        this.confirmations.add({ ...frame, terminalId: this.#terminalId ?? undefined });
        return;
      case 'error':
        this.#terminal?.write(`\r\n\x1b[31m[${frame.code}] ${frame.message}\x1b[0m\r\n`);
        return;
    }
  }

  #execute(): void {
    const command = this.#command.value.trim();
    if (!command) return;
    if (!this.#socket || this.#socket.readyState !== WebSocket.OPEN) {
      this.#setState('not connected');
      void this.#open();
      return;
    }
    // The shell reads commands from a pipe, so nothing echoes them: the panel shows what it sent.
    this.#terminal?.write(`\x1b[2m$ ${command}\x1b[0m\r\n`);
    this.#send({ type: 'execute', command });
    this.#command.value = '';
  }

  /**
   * A command held in this terminal was decided (in the dialog, here or in another tab): the
   * terminal says how it went, after whatever output it printed.
   */
  commandDecided(held: HeldCommand, outcome: HeldOutcome): void {
    if (held.terminalId === undefined || held.terminalId !== this.#terminalId) return;
    const text = `held command ${outcomeText(outcome).toLowerCase()}`;
    const colour = outcome.kind === 'ran' && outcome.exitCode === 0 ? '32' : outcome.kind === 'ran' ? '31' : '33';
    this.#terminal?.write(`\r\n\x1b[${colour}m[${text}]\x1b[0m\r\n`);
    this.#setState(text);
  }

  #send(frame: Record<string, unknown>): void {
    if (this.#socket?.readyState === WebSocket.OPEN) this.#socket.send(JSON.stringify(frame));
  }

  #resize(): void {
    if (!this.#fit || !this.#terminal || this.root.hidden) return;
    this.#fit.fit();
    this.#send({ type: 'resize', cols: this.#terminal.cols, rows: this.#terminal.rows });
  }

  #setState(text: string): void {
    this.#state.textContent = text;
  }
}
