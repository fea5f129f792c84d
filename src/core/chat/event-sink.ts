import type { ChatEvent } from './chat-events.js';

/**
 * Where the engine puts its events. For the markdown streams (CONTRACT §6) text is held back
 * until a line is complete, so every `text` event ends on a line boundary; the rest of the last
 * line goes out before any other event and at the end.
 */
export class EventSink {
  private pendingLine = '';

  constructor(
    private readonly push: (event: ChatEvent) => void,
    private readonly wholeLines: boolean,
  ) {}

  emit(event: ChatEvent): void {
    if (event.type === 'text' && this.wholeLines) {
      const text = this.pendingLine + event.content;
      const cut = text.lastIndexOf('\n') + 1;
      this.pendingLine = text.slice(cut);
      if (cut > 0) this.push({ type: 'text', content: text.slice(0, cut) });
      return;
    }
    if (event.type === 'text') {
      this.push(event);
      return;
    }
    this.flush();
    this.push(event);
  }

  flush(): void {
    if (this.pendingLine === '') return;
    const content = this.pendingLine;
    this.pendingLine = '';
    this.push({ type: 'text', content });
  }
}
