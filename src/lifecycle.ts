// An operation's start-up as an ordered stack (the shape of TC39's
// DisposableStack): each resource is opened through the stack, which
// remembers how to undo it; when a later step fails, everything opened so
// far is undone newest first, and the first failure is what the caller
// sees. On success the owner takes the resources and closes them in its
// own order (Supervisor.stop), and the stack forgets them.

export class OpenStack {
  private readonly undo: { what: string; fn: () => unknown }[] = [];

  /** open a resource; if a later step fails, dispose(resource) undoes it */
  async open<T>(what: string, open: () => T | Promise<T>, dispose: (x: T) => unknown): Promise<T> {
    const x = await open();
    this.undo.push({ what, fn: () => dispose(x) });
    return x;
  }

  /** remember one undo step for something already done */
  defer(what: string, fn: () => unknown): void {
    this.undo.push({ what, fn });
  }

  /** what would be undone, oldest first (for tests and messages) */
  get opened(): string[] {
    return this.undo.map((u) => u.what);
  }

  /** undo everything, newest first; an undo that fails does not stop the rest nor hide the original failure */
  async disposeAll(): Promise<void> {
    for (let u = this.undo.pop(); u; u = this.undo.pop()) {
      try {
        await u.fn();
      } catch {
        /* the failure being unwound is the one reported */
      }
    }
  }

  /** start-up succeeded: the owner closes its resources itself */
  release(): void {
    this.undo.length = 0;
  }
}
