/** An unbounded queue a loop awaits: producers push (subscriptions, stdin lines), one consumer takes in order. */

export class AsyncQueue<T> {
  readonly #items: T[] = [];
  readonly #waiters: Array<(item: T) => void> = [];

  push(item: T): void {
    const waiter = this.#waiters.shift();
    if (waiter) waiter(item);
    else this.#items.push(item);
  }

  /** The next item, waiting for one if none is queued. */
  next(): Promise<T> {
    if (this.#items.length > 0) return Promise.resolve(this.#items.shift() as T);
    return new Promise((resolve) => this.#waiters.push(resolve));
  }
}
