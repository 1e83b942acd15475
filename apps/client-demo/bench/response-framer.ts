/**
 * Finds where HTTP/1.1 responses end in the bytes of one keep-alive connection, for the
 * interleaved latency client: it must know the instant a response is complete, and an HTTP
 * client library would add its own scheduling to what is timed.
 *
 * Only what the bench's route answers is supported: a status line, headers, and a body framed
 * by `Content-Length` (or none, for 204 and 304). A chunked or unframed response is an error,
 * not a guess.
 */
export class ResponseFramer {
  private pending: Buffer = Buffer.alloc(0);
  /** Body bytes still due for the response being read; -1 while reading its head. */
  private bodyLeft = -1;
  private status = 0;

  /**
   * Takes the next bytes; returns the status codes of the responses they completed, in order
   * (usually none or one).
   */
  feed(chunk: Buffer): number[] {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    const done: number[] = [];
    for (;;) {
      if (this.bodyLeft < 0) {
        const end = this.pending.indexOf('\r\n\r\n');
        if (end < 0) return done;
        this.readHead(this.pending.toString('latin1', 0, end));
        this.pending = this.pending.subarray(end + 4);
      }
      if (this.pending.length < this.bodyLeft) {
        this.bodyLeft -= this.pending.length;
        this.pending = Buffer.alloc(0);
        return done;
      }
      this.pending = this.pending.subarray(this.bodyLeft);
      this.bodyLeft = -1;
      done.push(this.status);
    }
  }

  private readHead(head: string): void {
    const lines = head.split('\r\n');
    const statusLine = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '');
    if (!statusLine) throw new Error(`not an HTTP/1.x status line: ${JSON.stringify(lines[0])}`);
    this.status = Number(statusLine[1]);
    let length: number | undefined;
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
      if (name === 'transfer-encoding')
        throw new Error(`unsupported response framing: Transfer-Encoding ${value}`);
      if (name === 'content-length') length = Number(value);
    }
    if (length === undefined) {
      if (this.status === 204 || this.status === 304) length = 0;
      else throw new Error(`response ${this.status} has no Content-Length`);
    }
    if (!Number.isSafeInteger(length) || length < 0)
      throw new Error(`bad Content-Length in response ${this.status}`);
    this.bodyLeft = length;
  }
}
