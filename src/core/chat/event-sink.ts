import type { ChatEvent } from './chat-events.js';

/**
 * Where the engine puts its events. For the markdown streams (CONTRACT §6) text is held back
 * until a line is complete, so every `text` event ends on a line boundary, even when tool calls
 * come in the middle of a line: the rest of that line waits for them, and the last line goes out
 * at the end (flush()).
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
    this.push(event);
  }

  flush(): void {
    if (this.pendingLine === '') return;
    const content = this.pendingLine;
    this.pendingLine = '';
    this.push({ type: 'text', content });
  }
}
