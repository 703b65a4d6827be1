/**
 * The service-wide limit on command hooks running at once: each is a `sh -c` process group, and
 * a burst of calls must not fork without bound. A hook over the limit waits for a slot, first
 * come first served, for at most what it has of its own timeout; one that gets none is refused.
 */
export type SlotRelease = () => void;

export class HookSlots {
  private running = 0;
  private readonly waiting: Array<(release: SlotRelease) => void> = [];

  constructor(readonly limit: number) {}

  /** A slot's release, or `undefined` when none came free within `timeoutMs` or `signal` aborted. */
  acquire(timeoutMs: number, signal?: AbortSignal): Promise<SlotRelease | undefined> {
    if (signal?.aborted) return Promise.resolve(undefined);
    if (this.running < this.limit) {
      this.running++;
      return Promise.resolve(this.releaser());
    }
    return new Promise((resolve) => {
      const grant = (release: SlotRelease) => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", giveUp);
        resolve(release);
      };
      const giveUp = () => {
        const at = this.waiting.indexOf(grant);
        if (at >= 0) this.waiting.splice(at, 1);
        clearTimeout(timer);
        signal?.removeEventListener("abort", giveUp);
        resolve(undefined);
      };
      const timer = setTimeout(giveUp, timeoutMs);
      signal?.addEventListener("abort", giveUp, { once: true });
      this.waiting.push(grant);
    });
  }

  private releaser(): SlotRelease {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      // The slot passes straight to the next in line, so a newcomer cannot overtake it.
      const next = this.waiting.shift();
      if (next) next(this.releaser());
      else this.running--;
    };
  }
}
