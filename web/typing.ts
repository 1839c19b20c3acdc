// The chat page's typing line: "Bot is typing…" (or "Operator") for the chat shown, for a few seconds after each
// typing action unless renewed, and gone at once when a message from that side arrives.

/** How long one typing action shows. */
const TYPING_SHOWN_MS = 6000;

export class TypingLine {
  /** Chats whose bot side is typing, until when. */
  private readonly until = new Map<string, { until: number; sender: string }>();
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly line: () => HTMLElement,
    private readonly shown: () => string | undefined,
  ) {}

  start(chatId: string, sender: string): void {
    this.until.set(chatId, { until: Date.now() + TYPING_SHOWN_MS, sender });
    this.render();
  }

  stop(chatId: string): void {
    if (this.until.delete(chatId)) this.render();
  }

  render(): void {
    const chatId = this.shown();
    const typing = chatId ? this.until.get(chatId) : undefined;
    const fresh = typing && typing.until > Date.now();
    const line = this.line();
    line.hidden = !fresh;
    line.textContent = fresh ? `${typing.sender === 'operator' ? 'Operator' : 'Bot'} is typing…` : '';
    clearTimeout(this.timer);
    if (fresh) this.timer = setTimeout(() => this.render(), typing.until - Date.now() + 10);
  }
}
