import './styles.css';
import { renderAccount, renderLoginRequired, renderSignedOut } from './account.js';
import { createApiClient } from './api-client.js';
import { fetchSession, TokenHolder } from './auth-session.js';
import { BudgetIndicator } from './budget-indicator.js';
import { fetchCaller, type CallerAware } from './caller.js';
import { ChatPanel } from './chat-panel.js';
import { ConfirmationDialog } from './confirmation-dialog.js';
import { ConversationList } from './conversation-list.js';
import { byId, el } from './dom.js';
import { ConversationDrawer } from './drawer.js';
import { EventFeed } from './event-feed.js';
import { ModelPicker } from './model-picker.js';
import { PolicyEditor } from './policy-editor.js';
import { TerminalPanel } from './terminal-panel.js';
import { UsageNavigation } from './usage-navigation.js';
import { UsagePage } from './usage-page.js';
import { WorkspacePicker } from './workspace-picker.js';

// Start-up: who is this (auth), then the panels, then their data. Each panel is a small module
// owning its part of the page; they meet only here.
async function start(): Promise<void> {
  const session = await fetchSession();
  renderAccount(byId('account'), session);
  if (session.authEnabled && !session.authenticated) {
    byId('sidebar').hidden = true;
    renderLoginRequired(byId('chat'));
    return;
  }

  const tokens = new TokenHolder(session, () => {
    renderSignedOut(byId('account'));
  });
  const client = createApiClient(tokens);
  const feed = new EventFeed(client);

  const confirmations = new ConfirmationDialog(client);
  // The callback runs only after an answer ends, long after `conversations` below exists.
  // The picker is made first: the panel asks it which model each message goes to.
  const models = new ModelPicker(byId('pickers'), client, feed);
  const budget = new BudgetIndicator(client);
  const chat = new ChatPanel(
    byId('chat'),
    client,
    () => {
      void conversations.refresh();
      void budget.refresh();
    },
    models,
  );
  byId('chat-header').append(budget.element);
  chat.onQuotaRefused = () => void budget.refresh();
  const conversations = new ConversationList(byId('sidebar'), client, chat);
  const drawer = new ConversationDrawer(byId('sidebar'), [byId('top-bar'), byId('chat'), byId('terminal-panel')]);
  byId('top-bar').prepend(drawer.toggleButton);
  conversations.onChosen = () => {
    drawer.close(false);
  };
  const usagePage = new UsagePage(client, () => drawer.toggleButton);
  const policies = new PolicyEditor(client, () => drawer.toggleButton);
  const usageNavigation = new UsageNavigation(byId('sidebar'), usagePage, policies);
  // A page opened from the drawer closes it; the drawer's button takes the focus back afterwards
  // (the button that opened the page slides out of sight with the drawer).
  usageNavigation.onOpen = (button) => {
    if (!drawer.isOpen) return button;
    drawer.close(false);
    return drawer.toggleButton;
  };
  policies.onSaved = () => {
    void budget.refresh();
    void models.refresh();
  };
  const workspaces = new WorkspacePicker(byId('pickers'), client, () => void conversations.refresh());
  const terminal = new TerminalPanel(byId('terminal-panel'), client, tokens, confirmations);

  byId('account').prepend(terminal.toggleButton, feed.element);

  confirmations.onHeld = (held) => {
    chat.commandHeld(held);
  };
  confirmations.onDecided = (held, outcome) => {
    chat.commandDecided(held.commandId);
    terminal.commandDecided(held, outcome);
  };
  feed.on('pending_command', (event) => {
    confirmations.add({
      commandId: String(event.commandId),
      toolCallId: typeof event.toolCallId === 'string' ? event.toolCallId : undefined,
      command: String(event.command),
      risk: String(event.risk),
      reasons: Array.isArray(event.reasons) ? event.reasons.map(String) : [],
      terminalId: typeof event.terminalId === 'string' ? event.terminalId : undefined,
    });
  });
  // Another tab or client changed the list: show it here too.
  feed.on('conversation', () => void conversations.refresh());
  feed.onRestart(() => {
    void confirmations.loadPending();
    void conversations.refresh();
  });

  // Every control whose action needs more than every signed-in role has starts hidden or off; the
  // server's word on the caller (/api/auth/me) turns on what the caller's roles allow. Asked again
  // with each new token, which may carry other roles. A failed answer leaves the page as it was:
  // at start that is the fail-closed default, later it is the last answer, not less.
  const callerAware: CallerAware[] = [usageNavigation, chat, models, workspaces, terminal, confirmations];
  let callerAsked = 0;
  const showCaller = async (): Promise<void> => {
    const asked = ++callerAsked;
    try {
      const caller = await fetchCaller(client);
      if (asked !== callerAsked) return;
      for (const part of callerAware) part.showFor(caller);
    } catch (error) {
      console.warn('could not read what the caller may do', error);
    }
  };
  tokens.onRenew(() => void showCaller());

  // Held commands are asked for once it is known whether the caller may have any.
  const callerShown = showCaller().then(() => confirmations.loadPending());
  await Promise.all([chat.start(), models.refresh(), workspaces.refresh(), budget.refresh(), callerShown]);
  await conversations.refresh();
  document.body.dataset.ready = 'true';
}

void start().catch((error: unknown) => {
  byId('chat').append(el('p', { class: 'fatal', role: 'alert' }, `The assistant could not start: ${error instanceof Error ? error.message : String(error)}`));
});
