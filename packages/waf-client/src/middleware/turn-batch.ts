/**
 * Work items that arrive during one turn of the event loop, run one at a time while the process
 * is quiet and as one batch at the end of the turn while it is busy.
 *
 * Why batches: under load, one turn of Node's event loop reads many sockets (about seven per
 * turn with 16 busy connections on the project's machine) and runs each request's code in turn.
 * Work done per request between the HTTP parser and the app's router finds its code and data
 * evicted from the CPU caches by the request before it; done for the whole turn's requests in a
 * row, only the first pays for fetching them back ("cohort scheduling", Larus and Parkes, 2002).
 *
 * Why only under load: waiting for the end of the turn cost a lone request 10-30 us on the
 * project's machine (one connection), and a lone request has nothing to share its cache misses
 * with. So the first item of a turn runs at once when the previous turn that brought items
 * brought at most one; the items after it in the same turn, and every item of a turn that
 * follows a busier one, wait for the end of the turn (the check phase, via one `setImmediate`
 * per turn, right after the sockets read in that turn). Items run in arrival order either way.
 * An item added while a batch runs belongs to the next turn.
 */
export class TurnBatch<T> {
  private waiting: T[] = [];
  /** Items added in this turn, and in the last turn that had any. */
  private thisTurn = 0;
  private lastTurn = 0;
  private turnEndScheduled = false;

  /**
   * `runNow(item)` runs an item at once; `runBatch(items)` runs a turn's waiting items, in
   * arrival order. Whatever they throw propagates: from `add` for `runNow`, from the
   * `setImmediate` callback for `runBatch`.
   */
  constructor(
    private readonly runNow: (item: T) => void,
    private readonly runBatch: (items: readonly T[]) => void,
  ) {}

  add(item: T): void {
    if (!this.turnEndScheduled) {
      this.turnEndScheduled = true;
      setImmediate(this.endTurn);
    }
    if (++this.thisTurn === 1 && this.lastTurn <= 1) this.runNow(item);
    else this.waiting.push(item);
  }

  private readonly endTurn = (): void => {
    this.turnEndScheduled = false;
    this.lastTurn = this.thisTurn;
    this.thisTurn = 0;
    const items = this.waiting;
    if (items.length === 0) return;
    this.waiting = [];
    this.runBatch(items);
  };
}
