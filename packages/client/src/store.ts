// One chat's messages as a client must keep them: each id once, in created_at order, and an edited copy replacing
// the older one by its edited_at (never the reverse: an older copy arriving late is ignored).
import type { Message } from './types';

/** Whether `m` is a later version of `known`: its edited_at is later (null until the first edit). */
export const isNewer = (m: Message, known: Message): boolean => (m.edited_at ?? '') > (known.edited_at ?? '');

const byTime = (a: Message, b: Message) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id);

export class MessageStore {
  private readonly byId = new Map<string, Message>();
  private sorted: Message[] | undefined;

  /** Adds a message: 'message' when new, 'updated' when a later edit replaced it, undefined when ignored. */
  put(m: Message): 'message' | 'updated' | undefined {
    const known = this.byId.get(m.id);
    if (known && !isNewer(m, known)) return undefined;
    this.byId.set(m.id, m);
    this.sorted = undefined;
    return known ? 'updated' : 'message';
  }

  get(id: string): Message | undefined {
    return this.byId.get(id);
  }

  /** Every message, oldest first (created_at, then id). */
  list(): Message[] {
    this.sorted ??= [...this.byId.values()].sort(byTime);
    return this.sorted;
  }

  get size(): number {
    return this.byId.size;
  }

  /** The newest id held (ids are time-ordered strings of equal length). */
  lastId(): string | undefined {
    let last: string | undefined;
    for (const id of this.byId.keys()) if (last === undefined || id > last) last = id;
    return last;
  }

  firstId(): string | undefined {
    let first: string | undefined;
    for (const id of this.byId.keys()) if (first === undefined || id < first) first = id;
    return first;
  }
}
