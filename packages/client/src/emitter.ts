// A small typed event emitter: `on` returns what removes the listener; a listener that throws does not stop the others.

export type Listener<T> = (value: T) => void;

export class Emitter<Events extends object> {
  private readonly listeners = new Map<keyof Events, Set<Listener<never>>>();

  on<K extends keyof Events>(event: K, fn: Listener<Events[K]>): () => void {
    const set = this.listeners.get(event) ?? new Set();
    this.listeners.set(event, set);
    set.add(fn);
    return () => this.off(event, fn);
  }

  off<K extends keyof Events>(event: K, fn: Listener<Events[K]>): void {
    this.listeners.get(event)?.delete(fn);
  }

  protected emit<K extends keyof Events>(event: K, value: Events[K]): void {
    for (const fn of this.listeners.get(event) ?? []) {
      try {
        (fn as Listener<Events[K]>)(value);
      } catch (err) {
        // An integrator's listener failing must not break the client's own bookkeeping.
        setTimeout(() => {
          throw err;
        });
      }
    }
  }
}
