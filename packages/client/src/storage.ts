// Where the visitor's external_id is kept between visits: localStorage when the page has it, else memory.

/** The part of the Web Storage API the client uses (localStorage, sessionStorage, or your own). */
export interface StorageLike {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

/** A storage that lives as long as the process (Node, or a page whose localStorage is blocked). */
export function memoryStorage(): StorageLike {
  const items = new Map<string, string>();
  return {
    getItem: (k) => items.get(k) ?? null,
    setItem: (k, v) => void items.set(k, v),
    removeItem: (k) => void items.delete(k),
  };
}

/** localStorage if there is one and it works (a sandboxed frame or a privacy mode throws on access), else memory. */
export function defaultStorage(): StorageLike {
  try {
    const ls = (globalThis as { localStorage?: StorageLike }).localStorage;
    if (ls) {
      ls.getItem('chat.probe');
      return ls;
    }
  } catch {
    /* blocked: fall through */
  }
  return memoryStorage();
}
