// Loads a handler module of the route table the way Lambda does: once, on first use (a cold start).
import { resolve } from 'node:path';

export function handlerLoader<H>(root: string): (entry: string) => Promise<H> {
  const loaded = new Map<string, Promise<H>>();
  return (entry) => {
    let h = loaded.get(entry);
    if (!h) {
      h = import(resolve(root, entry)).then((m) => (m.handler ?? m.default?.handler) as H);
      loaded.set(entry, h);
    }
    return h;
  };
}
