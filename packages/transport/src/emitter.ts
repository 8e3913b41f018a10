/** Removes the handler it was returned for. Calling it twice is harmless. */
export type Unsubscribe = () => void;

/** A handler for the event `K` of an event map `M`. */
export type Handler<M, K extends keyof M> = (event: M[K]) => void;

/**
 * The subscription half of {@link Emitter}: what the contract interfaces expose. Works in browsers
 * and Node alike (no `node:events`).
 */
export interface EventSource<M> {
  /** Subscribes `handler` to `type`; returns the function that unsubscribes it. */
  on<K extends keyof M>(type: K, handler: Handler<M, K>): Unsubscribe;
}

/**
 * A tiny typed event emitter for transport implementations. Handlers run synchronously in
 * subscription order; a handler that throws does not stop the others (the first error is rethrown
 * after all handlers ran). Subscribing or unsubscribing during an emit affects the next emit only.
 */
export class Emitter<M> implements EventSource<M> {
  private readonly handlers = new Map<keyof M, Array<(event: never) => void>>();

  on<K extends keyof M>(type: K, handler: Handler<M, K>): Unsubscribe {
    const list = this.handlers.get(type);
    const fn = handler as (event: never) => void;
    if (list) this.handlers.set(type, [...list, fn]);
    else this.handlers.set(type, [fn]);
    let active = true;
    return () => {
      if (!active) return;
      active = false;
      const current = this.handlers.get(type);
      if (!current) return;
      const i = current.indexOf(fn);
      if (i >= 0) this.handlers.set(type, [...current.slice(0, i), ...current.slice(i + 1)]);
    };
  }

  /** Calls every handler of `type` with `event`. */
  emit<K extends keyof M>(type: K, event: M[K]): void {
    const list = this.handlers.get(type) as Array<Handler<M, K>> | undefined;
    if (!list) return;
    let failure: { error: unknown } | undefined;
    for (const h of list) {
      try {
        h(event);
      } catch (error) {
        failure ??= { error };
      }
    }
    if (failure) throw failure.error;
  }

  /** Whether `type` has at least one handler. */
  has(type: keyof M): boolean {
    return (this.handlers.get(type)?.length ?? 0) > 0;
  }

  /** Drops every handler (used once a connection is closed and its last event was emitted). */
  clear(): void {
    this.handlers.clear();
  }
}
