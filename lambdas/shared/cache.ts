// A small in-memory TTL cache (per Lambda instance): bot settings are read, and tokens verified, at most once per TTL.

export class TtlCache<V> {
  private readonly entries = new Map<string, { value: V; expires: number }>();

  constructor(
    private readonly ttlMs: () => number,
    private readonly maxEntries = 1000,
  ) {}

  async get(key: string, load: () => Promise<V>): Promise<V> {
    const ttl = this.ttlMs();
    const hit = this.entries.get(key);
    if (ttl > 0 && hit && hit.expires > Date.now()) return hit.value;
    const value = await load();
    if (ttl > 0) {
      if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
      this.entries.set(key, { value, expires: Date.now() + ttl });
    }
    return value;
  }

  /** Forgets one key, or every key. */
  clear(key?: string): void {
    if (key === undefined) this.entries.clear();
    else this.entries.delete(key);
  }
}
