/**
 * The requests a worker has read and not served yet, in the order it serves them. A call still in it can be
 * taken out by id (the host's `cancel`: it sent the call to another worker); a call already served or never
 * seen cannot, and its cancel is ignored. Cancels are rare and the queue holds a read or two, so taking out
 * is a scan.
 */
export class RequestQueue<T> {
  /** Served from `#at`; a cancelled call leaves a hole. */
  #items: (T | undefined)[] = [];
  #at = 0;
  #size = 0;
  readonly #callId: (item: T) => number | undefined;

  /** `callId`: the id of an item that is a call, undefined for any other request. */
  constructor(callId: (item: T) => number | undefined) {
    this.#callId = callId;
  }

  /** Requests waiting (cancelled calls not counted). */
  get size(): number {
    return this.#size;
  }

  push(item: T): void {
    this.#items.push(item);
    this.#size++;
  }

  /** The next request to serve, or undefined when none is left. */
  next(): T | undefined {
    while (this.#at < this.#items.length) {
      const item = this.#items[this.#at++];
      if (item === undefined) continue;
      this.#size--;
      return item;
    }
    this.#items = [];
    this.#at = 0;
    return undefined;
  }

  /** The ids of the calls next in line for as long as `take` holds of them, at most `max`. */
  leadingIds(max: number, take: (item: T) => boolean): number[] {
    const ids: number[] = [];
    for (let i = this.#at; i < this.#items.length && ids.length < max; i++) {
      const item = this.#items[i];
      if (item === undefined) continue;
      const id = this.#callId(item);
      if (id === undefined || !take(item)) break;
      ids.push(id);
    }
    return ids;
  }

  /** Takes out the waiting call with this id; false if no such call waits (served already, or never sent). */
  cancel(id: number): boolean {
    for (let i = this.#at; i < this.#items.length; i++) {
      const item = this.#items[i];
      if (item === undefined || this.#callId(item) !== id) continue;
      this.#items[i] = undefined;
      this.#size--;
      return true;
    }
    return false;
  }
}
