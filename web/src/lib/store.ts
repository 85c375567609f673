import { useEffect, useState } from 'preact/hooks';

/** A value with subscribers: the app's few pieces of shared state (session, sync status, toasts). */
export interface Store<T> {
  get(): T;
  set(value: T): void;
  update(change: (value: T) => T): void;
  subscribe(listener: (value: T) => void): () => void;
}

export function createStore<T>(initial: T): Store<T> {
  let value = initial;
  const listeners = new Set<(value: T) => void>();
  return {
    get: () => value,
    set(next) {
      if (Object.is(next, value)) return;
      value = next;
      for (const listener of [...listeners]) listener(value);
    },
    update(change) {
      this.set(change(value));
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

export function useStore<T>(store: Store<T>): T {
  const [, setTick] = useState(0);
  useEffect(() => store.subscribe(() => setTick((tick) => tick + 1)), [store]);
  return store.get();
}

/** A flag that stays false: stands in for a store that does not exist yet. */
export const NEVER_TRUE: Store<boolean> = createStore(false);
