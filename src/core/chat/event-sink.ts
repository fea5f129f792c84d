import type { TokenLogprob } from '../providers/call-options.js';
import type { ChatEvent } from './chat-events.js';

/**
 * Where the engine puts its events. For the markdown streams (CONTRACT §6) text is held back
 * until a line is complete, so every `text` event ends on a line boundary, even when tool calls
 * come in the middle of a line: the rest of that line waits for them, and the last line goes out
 * at the end (flush()).
 */
export class EventSink {
  private pendingLine = '';
  /** The log probabilities of the held-back text go out with the line that carries it. */
  private pendingLogprobs: TokenLogprob[] = [];

  constructor(
    private readonly push: (event: ChatEvent) => void,
    private readonly wholeLines: boolean,
  ) {}

  emit(event: ChatEvent): void {
    if (event.type === 'text' && this.wholeLines) {
      const text = this.pendingLine + event.content;
      const cut = text.lastIndexOf('\n') + 1;
      this.pendingLine = text.slice(cut);
      if (event.logprobs) this.pendingLogprobs.push(...event.logprobs);
      if (cut > 0) this.push(this.textEvent(text.slice(0, cut)));
      return;
    }
    this.push(event);
  }

  flush(): void {
    if (this.pendingLine === '') return;
    const content = this.pendingLine;
    this.pendingLine = '';
    this.push(this.textEvent(content));
  }

  private textEvent(content: string): ChatEvent {
    if (this.pendingLogprobs.length === 0) return { type: 'text', content };
    const logprobs = this.pendingLogprobs;
    this.pendingLogprobs = [];
    return { type: 'text', content, logprobs };
  }
}
