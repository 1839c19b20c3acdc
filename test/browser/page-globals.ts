// The browser globals the tests' page.evaluate code reads, typed: that code runs in the page, and this project's
// tsconfig has no DOM library, so it names what it finds there with `globalThis as unknown as PageGlobals`.
export interface PageElement {
  hidden: boolean;
  textContent: string | null;
  /** An <img>'s loading state. */
  complete?: boolean;
  naturalWidth?: number;
  /** A <progress>'s value. */
  value?: number;
}

export interface PageStorage {
  clear(): void;
  setItem(key: string, value: string): void;
  /** The stored items, as Object.keys and Object.entries see them. */
  [key: string]: unknown;
}

export interface PageGlobals {
  document: {
    body: PageElement;
    documentElement: PageElement;
    getElementById(id: string): PageElement | null;
    querySelector(selector: string): PageElement | null;
    querySelectorAll(selector: string): ArrayLike<PageElement> & Iterable<PageElement>;
  };
  localStorage: PageStorage;
  getComputedStyle(el: PageElement): { getPropertyValue(name: string): string };
  MutationObserver: new (callback: () => void) => { observe(target: PageElement, options: Record<string, boolean>): void };
}
